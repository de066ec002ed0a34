"""Claims of Part II about the LN layer (Theorem 4.3, Appendix C, Figs. 2
and 4)."""

from __future__ import annotations

import numpy as np

from .. import dynamics, theory
from ..config import PAPER
from ..runs import ETA, TASKS, ensemble, ln_run, sample
from .core import over_seeds, trend_status, within
from .part2 import zero_blocks_over_seeds

# --- Theorem 4.3: with LN
# ---------------------------------------------------------------------


def _ln_zero():
    return zero_blocks_over_seeds("layer")


def gamma_population(task: str = "sphere", t: int = PAPER.steps) -> float:
    """gamma_t of the LN layer's reduced population dynamics."""
    steps, w, v = ln_run(task)[1]
    return float((w * v)[list(steps).index(t)])


def _ln_sgd():
    ratio = {
        t: np.array([h.product[-1] for h in hs]) / gamma_population(t)
        for t, hs in ensemble("layer").items()
    }
    worst = np.max([np.abs(r - 1) for r in ratio.values()], axis=0)
    return over_seeds(
        worst,
        worst < 0.02,
        "worst |SGD/population - 1| per seed; median "
        "ratio "
        + ", ".join(
            f"{TASKS[t]} {np.median(r):.4f}" for t, r in ratio.items()
        ),
    )


def _at_decades(t, y, decades=(10**3, 10**4, 10**5, 10**6)):
    return [float(np.interp(x, t, y)) for x in decades]


def decade_trend(t, y, target: float, tol: float, name: str, digits: int):
    """A claim's three values for a quantity ``y(t)`` of the reduced
    dynamics that should tend to ``target``: its value at t = 10^6, the
    :func:`trend_status` of its values at t = 10^3..10^6, and those."""
    r = _at_decades(t, y)
    return (
        round(r[-1], 4),
        trend_status(r, target, tol),
        f"{name} at t = 10^3..10^6: "
        + ", ".join(f"{x:.{digits}f}" for x in r),
    )


def _ln_ratio():
    _, (t, w, v) = ln_run()
    return decade_trend(t, w / v, 1.0, 0.01, "alpha/beta", 3)


def _ln_exp():
    _, (t, w, v) = ln_run()
    p = [
        dynamics.exponent(t, w * v, x / 3, 3 * x)[0]
        for x in (10**3, 10**4, 10**5, 3 * 10**5)
    ]
    return (
        round(p[-1], 4),
        trend_status(p, 1 / 3, 0.01),
        "local exponent of gamma near t = 10^3, 10^4, 10^5, 3x10^5: "
        + ", ".join(f"{x:.3f}" for x in p),
    )


def _ln_loss():
    sm = sample("sphere", 20_000, 1)
    ratios = [
        float(theory.ln_layer_loss(sm, g)) * g**2 / theory.upsilon3(sm).value
        for g in (10.0, 100.0, 1000.0)
    ]
    return (
        round(ratios[-1], 5),
        within(ratios[-1], 1.0, 0.005),
        "at gamma = 10, 100, 1000: " + ", ".join(f"{x:.4f}" for x in ratios),
    )


def _gamma2000():
    _, (t, w, v) = ln_run()
    g = float((w * v)[list(t).index(2000)]) if 2000 in t else float("nan")
    return (
        round(g, 4),
        within(g, 1.55, 0.01),
        f"gamma_2000 = {g:.4f} against 1.55 (reduced population dynamics, "
        "F from 20 000 samples)",
    )


def _gamma_rate():
    tab, (t, w, v) = ln_run()
    C1 = theory.C1(sample("sphere", 20_000, 1)).value

    def ratio(a, b):
        return dynamics.power_increment(tab, a, b, ETA, 3) / (6 * ETA * C1)

    gammas = np.geomspace(100, 1e4, 9)
    r = np.array([ratio(np.sqrt(g), np.sqrt(g)) for g in gammas])
    limit = np.polyfit(1 / gammas, r, 2)[-1]
    along = [
        ratio(float(np.interp(x, t, w)), float(np.interp(x, t, v)))
        for x in (10**3, 10**4, 10**5, 10**6)
    ]
    return (
        round(float(limit), 4),
        within(limit, 1.0, 0.01),
        "along the trajectory at t = 10^3..10^6: "
        + ", ".join(f"{x:.3f}" for x in along),
    )
