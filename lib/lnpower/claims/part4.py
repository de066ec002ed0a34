"""Claims of §5 and Appendix G about training (Figs. 1-4) as the paper words
them, each measured over a seed ensemble and, where it depends on the
horizon, at both readings of T (``lnpower.runs.READINGS``); and the book's
rate-aware versions that tell a slow approach from a wrong limit. Looping at
inference (Figs. 5, G.3) is in :mod:`lnpower.claims.part4_depth`."""

from __future__ import annotations

import numpy as np

from .. import dynamics, stored
from ..readings import population_slopes, sgd_slopes
from ..runs import (
    READINGS,
    TASKS,
    ensemble,
    ln_run,
    looped_run,
)
from .core import over_seeds, verdict
from .part2_ln import decade_trend


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


def _names(model: str) -> tuple[str, str]:
    return ("w", "v") if model == "looped" else ("alpha", "beta")


def _growth_claim(model: str, power: float):
    worst, med = growth_spread(model, power)
    a, b = _names(model)
    return over_seeds(
        worst,
        worst <= 0.2,
        "median slopes "
        + "; ".join(
            f"{TASKS[t]}: {a} {x:.3f}, {b} {y:.3f}"
            for t, (x, y) in med.items()
        ),
    )


def _population_growth(model: str, power: float):
    """Slopes of the population recursion at both readings, and the worst
    distance at the epoch reading."""
    run = looped_run if model == "looped" else ln_run
    a, b = _names(model)
    rows, worst = [], 0.0
    for t in TASKS:
        for reading, T in READINGS.items():
            x, y = population_slopes(run(t)[1], T)
            rows.append(
                f"{TASKS[t]}, {reading} [{T // 10}, {T}]: {a} {x:.3f}, {b} "
                f"{y:.3f}"
            )
            if reading == "epochs":
                worst = max(worst, abs(x / power - 1), abs(y / power - 1))
    return worst, rows


def _fig1():
    return _growth_claim("looped", 0.25)


def _fig1_epochs():
    worst, rows = _population_growth("looped", 0.25)
    return round(worst, 3), verdict(worst <= 0.2), "; ".join(rows)


def _fig4():
    return _growth_claim("layer", 1 / 6)


def _fig4_epochs():
    runs = stored.load("layer")
    worst = [
        max(abs(x * 6 - 1) for t in TASKS for x in sgd_slopes(runs[t][s]))
        for s in range(len(runs["sphere"]))
    ]
    _, rows = _population_growth("layer", 1 / 6)
    med = {t: sgd_slopes(runs[t][0]) for t in TASKS}
    return over_seeds(
        worst,
        np.array(worst) <= 0.2,
        "SGD seed 0: "
        + "; ".join(
            f"{TASKS[t]}: alpha {x:.3f}, beta {y:.3f}"
            for t, (x, y) in med.items()
        )
        + "; population: "
        + "; ".join(rows),
    )


def _balance():
    _, (t, a, b) = ln_run()
    balance = (1 - a / b) * 2 * a * b / (b * b - a * a)
    return decade_trend(t, balance, 1.0, 0.02, "(1 - alpha/beta) 2 gamma/D", 4)


def _excess():
    _, (t, a, b) = ln_run()
    g = a * b
    vals = [
        (dynamics.exponent(t, g, x / 3, 3 * x)[0] - 1 / 3)
        * float(np.interp(x, t, g))
        for x in (10**4, 10**5, 3 * 10**5)
    ]
    spread = max(abs(v / np.mean(vals) - 1) for v in vals)
    return (
        round(spread, 4),
        verdict(spread < 0.15 and min(vals) > 0),
        "(p - 1/3) gamma near t = 10^4, 10^5, 3x10^5: "
        + ", ".join(f"{v:.4f}" for v in vals),
    )
