"""Inputs that several claims share, computed once per process: Monte Carlo samples, reduced
dynamics and trained histories (the latter through the training cache, so that chapters and
the reproduction report reuse the same runs)."""

from __future__ import annotations

from functools import cache

from .. import dynamics, theory
from ..config import PAPER, paper_config
from ..history import History
from ..tasks import Task
from ..train import fit_many

ETA = PAPER.lr
TASKS = {"sphere": "Task 1", "rotated": "Task 2"}  # the paper's names of the two tasks
BIG = 200_000  # the sample of the constants of Theorem 4.2, as book/without_ln draws it


def paper_task(name: str = "sphere") -> Task:
    """Task 1 (``"sphere"``) or Task 2 (``"rotated"``) at the paper's d and n."""
    return Task(name, PAPER.d, PAPER.n)


@cache
def sample(task: str = "sphere", samples: int = 100_000, seed: int = 0) -> theory.Sample:
    """A Monte Carlo sample of the task at the paper's d and n."""
    return theory.draw(paper_task(task), samples, seed)


@cache
def ln_run(task: str = "sphere", steps: int = 10**6):
    """The LN layer's reduced population dynamics (Theorem 4.3) from alpha=0, beta=1."""
    tab = dynamics.ln_layer_table(sample(task, 20_000, 1))
    return tab, dynamics.run(tab, 0.0, PAPER.v0, ETA, steps,
                             [PAPER.steps, *dynamics.log_steps(steps)])


@cache
def looped_F(task: str = "sphere", loops: int = 10) -> dynamics.Table:
    """F = L_L'/d of the looped model, tabulated from 5 000 samples."""
    return dynamics.looped_table(sample(task, 5_000, 1), loops)


@cache
def looped_run(task: str = "sphere", loops: int = 10, steps: int = 10**6):
    """The looped model's reduced population dynamics (Theorem 4.1) from w=0, v=1."""
    tab = looped_F(task, loops)
    return tab, dynamics.run(tab, 0.0, PAPER.v0, ETA, steps,
                             [PAPER.steps, *dynamics.log_steps(steps)])


def paper_runs(model: str, **overrides) -> dict[str, History]:
    """SGD at the paper's settings for Task 1 and Task 2, trained together and cached."""
    configs = [paper_config(model=model, task=t, **overrides) for t in ("sphere", "rotated")]
    return dict(zip(("sphere", "rotated"), fit_many(configs, cache=True)))
