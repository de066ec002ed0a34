"""Claims of §5 and Appendix G about looping at inference (Figs. 5 and
G.3): 'exponential in L' tested against the power method on the same test
matrices, over a seed ensemble and at both readings of T."""

from __future__ import annotations

import numpy as np

from ..depth import (
    fig5_curves,
    g3_curves,
    power_method_median,
    semilog_fit,
    structured_curves,
)
from ..runs import READINGS, TASKS, looped_run
from .core import STATUSES, ordering, over_seeds, verdict

# "exponential in L": EV within this of the power method's on the same points
R2_MARGIN = 0.02


def _exponential(curves) -> tuple[np.ndarray, list[str]]:
    """Per seed, the worst EV deficit against the power method's (over
    tasks and snapshots), and the median EV per task and snapshot."""
    deficit, rows = [], []
    for t, per_seed in curves.items():
        r2 = [
            {k: semilog_fit(c)[1] for k, c in seed.items()}
            for seed in per_seed
        ]
        deficit.append(
            [max(r["power method"] - v for v in r.values()) for r in r2]
        )
        rows.append(
            f"{TASKS[t]}: "
            + ", ".join(
                f"{k} {np.median([r[k] for r in r2]):.3f}" for k in r2[0]
            )
        )
    return np.max(deficit, axis=0), rows


def _fig5_exp():
    deficit, rows = _exponential(fig5_curves())
    return over_seeds(
        deficit,
        deficit <= R2_MARGIN,
        "worst EV deficit per seed; median EV " + "; ".join(rows),
    )


def _ordered(curves, quantity) -> tuple[str, list[str]]:
    """The :func:`ordering` status of ``quantity(curve)`` over the keys of
    each seed's curves (snapshots, then the power method), worst over tasks."""
    worst, rows = "reproduced", []
    for t, per_seed in curves.items():
        keys = list(per_seed[0])
        status, line = ordering(
            {str(k): [quantity(s[k]) for s in per_seed] for k in keys}
        )
        worst = max(worst, status, key=STATUSES.index)
        rows.append(f"{TASKS[t]}: {status}: {line}")
    return worst, rows


def _fig5_median():
    status, rows = _ordered(fig5_curves(), lambda c: c[24])
    return status, status, "; ".join(rows)


def _fig5_order():
    status, rows = _ordered(fig5_curves(), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


def _fig5_exp_epochs():
    deficit, rows = _exponential(fig5_curves("epochs"))
    return over_seeds(
        deficit, deficit <= R2_MARGIN, "median EV " + "; ".join(rows)
    )


def _fig5_order_epochs():
    status, rows = _ordered(fig5_curves("epochs"), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


def _g3():
    curves = g3_curves()
    deficit, rows = _exponential(curves)
    falls = np.all(
        [
            [c["looped model"][24] < c["looped model"][9] for c in per]
            for per in curves.values()
        ],
        axis=0,
    )
    return over_seeds(
        deficit,
        (deficit <= R2_MARGIN) & falls,
        "worst EV deficit per seed; median EV "
        + "; ".join(rows)
        + f"; error falls from L = 10 to 25 for {int(falls.sum())} seeds",
    )


def _g3_epochs():
    deficit, rows = [], []
    for t in TASKS:
        _, (steps, w, v) = looped_run(t)
        rho = float(np.interp(READINGS["epochs"], steps, w * v))
        c = structured_curves({"looped": rho}, t)["looped"]
        r2, pm = semilog_fit(c)[1], semilog_fit(power_method_median(t))[1]
        deficit.append(pm - r2 if c[24] < c[9] else np.inf)
        rows.append(
            f"{TASKS[t]}: rho_T {rho:.1f}, EV {r2:.3f} (power method "
            f"{pm:.3f})"
        )
    return (
        round(max(deficit), 4),
        verdict(max(deficit) <= R2_MARGIN),
        "; ".join(rows),
    )
