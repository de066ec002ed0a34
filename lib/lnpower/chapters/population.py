"""The population side of the paper's experiments, computed once and shared
by the chapters: Monte Carlo samples of the tasks at the paper's d and n,
and the exact reduced (scalar) population dynamics of the LN layer
(Theorem 4.3) and of the looped model (Theorem 4.1) from the paper's
initialisation."""

from __future__ import annotations

from .. import dynamics, theory
from ..cache import memo
from ..config import PAPER, paper_task

# the sample of the constants of Theorem 4.2, as book/without_ln draws it
BIG = 200_000


@memo
def sample(
    task: str = "sphere", samples: int = 100_000, seed: int = 0
) -> theory.Sample:
    """A Monte Carlo sample of the task at the paper's d and n."""
    return theory.draw(paper_task(task), samples, seed)


def _from_rest(tab: dynamics.Table, steps: int):
    """``steps`` of the reduced dynamics on ``tab`` from the paper's
    initialisation (the active weight that starts at 0, the other at v0),
    logged at T and at log-spaced steps."""
    logged = [PAPER.steps, *dynamics.log_steps(steps)]
    return dynamics.run(tab, 0.0, PAPER.v0, PAPER.lr, steps, logged)


@memo
def ln_run(task: str = "sphere", steps: int = 10**6):
    """The LN layer's reduced population dynamics (Theorem 4.3) from
    alpha=0, beta=1: the table of F and the run ``(t, alpha, beta)``."""
    tab = dynamics.ln_layer_table(sample(task, 20_000, 1))
    return tab, _from_rest(tab, steps)


@memo
def looped_F(task: str = "sphere", loops: int = 10) -> dynamics.Table:
    """F = L_L'/d of the looped model, tabulated from 5 000 samples."""
    return dynamics.looped_table(sample(task, 5_000, 1), loops)


@memo
def looped_run(task: str = "sphere", loops: int = 10, steps: int = 10**6):
    """The looped model's reduced population dynamics (Theorem 4.1) from
    w=0, v=1: the table of F and the run ``(t, w, v)``."""
    tab = looped_F(task, loops)
    return tab, _from_rest(tab, steps)
