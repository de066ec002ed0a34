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
from .core import over_seeds, verdict, within

D = PAPER.d


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


def _looped_zero():
    return zero_blocks_over_seeds("looped")


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


def _looped_inc():
    tab, (t, w, v) = looped_run()
    c_L = theory.c_L(sample("sphere", 5_000, 1), 10).value
    ratio = dynamics.power_increment(tab, w[-1], v[-1], ETA, 2) / (
        4 * ETA * c_L / D
    )
    return round(ratio, 4), within(ratio, 1.0, 0.02), f"c_L = {c_L:.4f}"


def _looped_exp():
    _, (t, w, v) = looped_run()
    pw = dynamics.exponent(t, w, 1e5, 1e6)[0]
    pr = dynamics.exponent(t, w * v, 1e5, 1e6)[0]
    ok = abs(pw - 0.25) < 0.01 and abs(pr - 0.5) < 0.01
    return round(pw, 4), verdict(ok), f"w: {pw:.4f}, rho: {pr:.4f}"
