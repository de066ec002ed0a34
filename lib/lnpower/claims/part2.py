"""Claims of Part II (§4.1-4.2, Appendices A-C): the training dynamics."""

from __future__ import annotations

import numpy as np

from .. import dynamics, theory
from ..config import PAPER
from ..readings import (
    STRUCTURE,
    structure_trend,
    zero_block_max,
)
from ..runs import ETA, TASKS, ensemble, looped_run, sample
from .core import claim, over_seeds, verdict, within

D = PAPER.d

CH_41 = "book/looped_power_method"
CH_LOOPED = "book/experiments_looped"  # SGD on the looped model


# --- Theorem 4.1: the looped model
# ------------------------------------------------------------


def zero_blocks_over_seeds(model: str):
    """The largest entry of the zero blocks per seed of ``model``'s
    ensemble (both tasks), as a claim's check returns it: it holds for a
    seed where that entry is exactly 0."""
    m = [
        max(zero_block_max(h) for h in pair)
        for pair in zip(*ensemble(model).values())
    ]
    return over_seeds(
        m, np.array(m) == 0, "largest entry of the zero blocks per seed"
    )


@claim(
    id="looped-zero-blocks",
    ref="thm-4-1",
    where="Theorem 4.1 (1), Fig. 1",
    statement=(
        "SGD from W = 0, V21 = I keeps W11, W21, W22, V11, V12, V22 exactly "
        "zero (looped model, L = 10, Tasks 1 and 2, T = 2000)"
    ),
    paper="zero for all t",
    tolerance="per seed: exactly 0 in every snapshot, both tasks",
    chapter=CH_LOOPED,
)
def _looped_zero():
    return zero_blocks_over_seeds("looped")


@claim(
    id="looped-diagonal",
    ref="thm-4-1",
    where="Theorem 4.1 (1), Fig. 1",
    statement=(
        "Only the diagonals of W12 and V21 stay large: 'all the other entries "
        "converge to zero' (looped model, SGD, T = 2000, both tasks)"
    ),
    paper="the off-structure entries converge to zero",
    tolerance=(
        f"per seed: structure residual below {STRUCTURE} at T and falling "
        "over the last decade "
        "(residual at T below the residual at T/10), both tasks"
    ),
    chapter=CH_LOOPED,
)
def _looped_diag():
    runs = ensemble("looped")
    level, falling, peak = [], [], []
    for pair in zip(*runs.values()):
        curves = [structure_trend(h) for h in pair]
        at = [
            dict(zip([t for t in h.steps if t > 0], c))
            for h, c in zip(pair, curves)
        ]
        level.append(max(c[-1] for c in curves))
        falling.append(
            all(
                a[h.steps[-1]] < a[_near(h.steps, h.steps[-1] / 10)]
                for h, a in zip(pair, at)
            )
        )
        peak.append(max(c.max() for c in curves))
    level, falling = np.array(level), np.array(falling)
    return over_seeds(
        level,
        (level < STRUCTURE) & falling,
        f"worst residual at T per seed; falling over the last decade for "
        f"{int(falling.sum())} of {len(level)} seeds; largest residual during "
        f"training, median over seeds {np.median(peak):.3f}",
    )


def _near(steps, t) -> int:
    """The logged step closest to ``t``."""
    return min(steps, key=lambda s: abs(s - t))


@claim(
    id="looped-overfits",
    ref="thm-4-1",
    where="Theorem 4.1; §5 (the looped model's generalisation)",
    statement=(
        "At the paper's settings (10 000 training samples, T = 2000) the "
        "looped model's test loss exceeds its training loss: the finite "
        "training set is fitted, not only the population (both tasks)"
    ),
    paper="the paper reports no train/test gap for the looped model",
    tolerance=(
        "per seed: test loss above training loss by more than 5 % at T, both "
        "tasks"
    ),
    chapter=CH_LOOPED,
    source="book",
)
def _looped_gap():
    gaps = [
        min(h.test_loss[-1] / h.train_loss[-1] - 1 for h in pair)
        for pair in zip(*ensemble("looped").values())
    ]
    med = {
        t: (
            np.median([h.train_loss[-1] for h in hs]),
            np.median([h.test_loss[-1] for h in hs]),
        )
        for t, hs in ensemble("looped").items()
    }
    return over_seeds(
        gaps,
        np.array(gaps) > 0.05,
        "smaller relative gap of the two tasks "
        "per seed; median train and test loss: "
        + "; ".join(
            f"{TASKS[t]} {a:.4f} and {b:.4f}" for t, (a, b) in med.items()
        ),
    )


@claim(
    id="looped-loss-limit",
    ref="thm-4-1",
    where="Theorem 4.1 (2)",
    statement=(
        "The loss decreases to L_L^(inf) > 0, the error of L power iterations "
        "(L = 10, Task 1)"
    ),
    paper="L_L(theta_t) -> L_L^(inf)",
    tolerance=(
        "population loss along the reduced dynamics within 1 % of L_L^(inf) "
        "at t = 10^6"
    ),
    chapter=CH_41,
)
def _looped_limit():
    _, (t, w, v) = looped_run()
    sm = sample("sphere", 20_000, 2)
    l_inf = theory.power_method_loss(sm, 10).value
    l_end = float(theory.looped_loss(sm, w[-1] * v[-1], 10))
    gap = l_end / l_inf - 1
    return (
        round(gap, 5),
        verdict(0 <= gap < 0.01 and l_inf > 0),
        f"L_10(rho_(10^6)) = {l_end:.4f}, L_10^(inf) = {l_inf:.4f}",
    )


@claim(
    id="looped-rho-increment",
    ref="thm-4-1",
    where="Theorem 4.1 (3), Appendix A.5",
    statement=(
        "rho_{t+1}^2 - rho_t^2 -> 4 eta c_L / d with c_L from L_L(rho) = "
        "L_L^(inf) + c_L/rho + o(1/rho) (Task 1, L = 10)"
    ),
    paper="ratio -> 1",
    tolerance="within 2 % at t = 10^6",
    chapter=CH_41,
)
def _looped_inc():
    tab, (t, w, v) = looped_run()
    c_L = theory.c_L(sample("sphere", 5_000, 1), 10).value
    ratio = dynamics.power_increment(tab, w[-1], v[-1], ETA, 2) / (
        4 * ETA * c_L / D
    )
    return round(ratio, 4), within(ratio, 1.0, 0.02), f"c_L = {c_L:.4f}"


@claim(
    id="looped-growth-exponents",
    ref="thm-4-1",
    where="Theorem 4.1 (3)",
    statement="w_t, v_t = Theta(t^(1/4)) and rho_t = Theta(t^(1/2))",
    paper="1/4 and 1/2",
    tolerance=(
        "least-squares exponents on [10^5, 10^6] within 0.01 (reduced "
        "dynamics, Task 1)"
    ),
    chapter=CH_41,
)
def _looped_exp():
    _, (t, w, v) = looped_run()
    pw = dynamics.exponent(t, w, 1e5, 1e6)[0]
    pr = dynamics.exponent(t, w * v, 1e5, 1e6)[0]
    ok = abs(pw - 0.25) < 0.01 and abs(pr - 0.5) < 0.01
    return round(pw, 4), verdict(ok), f"w: {pw:.4f}, rho: {pr:.4f}"
