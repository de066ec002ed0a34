"""How the book reads a number off a run: growth exponents over the last
decade of a run (Figs. 1 and 4) and their spread over a seed ensemble,
Fig. 3's train-test gap, the structure (4.2) and its residual, the no-LN
fixed point (Figs. 6-7) and the precision of a test loss."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .. import dynamics, model, theory, train
from ..claims.status import over_seeds
from ..config import PAPER, T_READINGS
from ..tasks import TASK_NAMES, per_sample_loss
from .ensembles import ensemble
from .population import ln_run, looped_run, sample

# "keeps the structure": off-structure entries below this x the active ones
STRUCTURE = 0.1
ZERO_W, ZERO_V = ("11", "21", "22"), ("11", "12", "22")


def window(T: int) -> tuple[float, float]:
    """The last decade of a run of T steps, where its growth exponent is
    read."""
    return T / 10, T


WINDOW = window(PAPER.steps)  # [200, 2000]


def slope(t, y, win=WINDOW) -> float:
    """Least-squares log-log slope of y against t over ``win``."""
    return dynamics.exponent(t, y, *win)[0]


def sgd_slopes(h) -> tuple[float, float]:
    """Exponents of the two active weights over the last decade of an SGD
    run, fitted at its logged (log-spaced) steps."""
    t = np.array(h.steps)
    return tuple(
        slope(t, np.asarray(x)[t], window(h.config.steps)) for x in (h.w, h.v)
    )


def population_slopes(run, T: int) -> tuple[float, float]:
    """The same exponents on a run of the reduced population dynamics ``(t,
    w, v)``."""
    t, w, v = run
    return slope(t, w, window(T)), slope(t, v, window(T))


def weight_names(model: str) -> tuple[str, str]:
    """The paper's names of a model's active weights."""
    return ("w", "v") if model == "looped" else ("alpha", "beta")


def growth_spread(model: str, power: float):
    """Per seed, the worst relative distance of the four slopes (two
    weights, two tasks) from ``power``, and the median slopes per task."""
    runs = ensemble(model)
    s = {t: np.array([sgd_slopes(h) for h in hs]) for t, hs in runs.items()}
    worst = np.max(
        [np.abs(x / power - 1).max(axis=1) for x in s.values()], axis=0
    )
    med = {t: np.median(x, axis=0) for t, x in s.items()}
    return worst, med


def growth_claim(model: str, power: float):
    """A claim's check that both active weights of ``model`` grow as
    t^power over the last decade, seed by seed (within 20 %)."""
    worst, med = growth_spread(model, power)
    a, b = weight_names(model)
    return over_seeds(
        worst,
        worst <= 0.2,
        quantity=f"the worst relative distance of the four slopes from "
        f"{Fraction(power).limit_denominator(12)}",
        detail="median slopes "
        + "; ".join(
            f"{TASK_NAMES[t]}: {a} {x:.3f}, {b} {y:.3f}"
            for t, (x, y) in med.items()
        ),
    )


def population_growth(model: str, power: float):
    """Slopes of the population recursion at both readings of T, and the
    worst distance from ``power`` at the epoch reading."""
    run = looped_run if model == "looped" else ln_run
    a, b = weight_names(model)
    rows, worst = [], 0.0
    for t in TASK_NAMES:
        for reading, T in T_READINGS.items():
            x, y = population_slopes(run(t)[1], T)
            rows.append(
                f"{TASK_NAMES[t]}, {reading} [{T // 10}, {T}]: {a} {x:.3f}, "
                f"{b} {y:.3f}"
            )
            if reading == "epochs":
                worst = max(worst, abs(x / power - 1), abs(y / power - 1))
    return worst, rows


def gap(h) -> float:
    """Fig. 3's quantity: ``|test loss / training loss - 1|`` at the end of a
    run."""
    return abs(h.test_loss[-1] / h.train_loss[-1] - 1)


def target_name(target: str) -> str:
    """A target's name as the book's prose spells it ("normalised")."""
    return target.replace("iz", "is")


def zero_block_max(history) -> float:
    """Largest entry, over every snapshot, of the blocks that (4.2) says
    stay zero."""
    return max(
        max(
            [model.blocks(W)[b].abs().max().item() for b in ZERO_W]
            + [model.blocks(V)[b].abs().max().item() for b in ZERO_V]
        )
        for W, V in history.snapshots.values()
    )


def zero_blocks_over_seeds(model: str):
    """The largest entry of the zero blocks per seed of ``model``'s
    ensemble (both tasks), as a claim's check returns it: it holds for a
    seed where that entry is exactly 0."""
    m = [
        max(zero_block_max(h) for h in pair)
        for pair in zip(*ensemble(model).values())
    ]
    return over_seeds(
        m, np.array(m) == 0, quantity="the largest entry of the zero blocks"
    )


def structure_trend(h) -> np.ndarray:
    """The structure residual (``model.structure_residual``) at every logged
    step t >= 1."""
    return np.array(
        [
            model.structure_residual(*h.snapshots[t]).item()
            for t in h.steps
            if t > 0
        ]
    )


def gamma_star(task: str, target: str) -> float:
    """Theorem 4.2's gamma* of the no-LN layer at the paper's d and n."""
    return theory.no_ln_optimum(sample(task), target)["gamma_star"]


def at_fixed_point(h, task: str, target: str) -> tuple[bool, str]:
    """Whether a no-LN run sits at its fixed point at T (Figs. 6-7):
    gamma~_T within 5 % of gamma*, drifting by less than 2 % over the last
    1000 steps, the structure kept."""
    off = h.product[-1] / gamma_star(task, target) - 1
    drift = abs(h.product[-1] / h.product[-1001] - 1)
    res = model.structure_residual(h.W, h.V).item()
    fine = abs(off) < 0.05 and drift < 0.02 and res < STRUCTURE
    return (
        fine,
        f"gamma~_T/gamma* - 1 {off:+.3f}, drift {drift:.3f}, residual "
        f"{res:.3f}",
    )


def test_loss_stderr(h, shift: int | None = None) -> float:
    """The standard error of a run's final test loss, a mean over its test
    set: the precision to which a measured loss can be compared with a
    population value. ``shift``: the seed shift the run was trained under
    (default ``LNPOWER_SEED``)."""
    c = h.config
    E, Y = train.dataset(c, "test", shift)
    W, V = h.W.double(), h.V.double()
    y = model.predict(E.double(), W, V, c.loops, c.norm)
    losses = per_sample_loss(y, Y.double(), c.target)
    return float(losses.std() / np.sqrt(len(losses)))
