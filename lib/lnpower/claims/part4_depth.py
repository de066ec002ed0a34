"""Claims of §5 and Appendix G about looping at inference (Figs. 5 and
G.3): 'exponential in L' tested against the power method on the same test
matrices, over a seed ensemble and at both readings of T."""

from __future__ import annotations

import numpy as np

from ..depth import (
    POINTS,
    fig5_curves,
    g3_curves,
    power_method_median,
    semilog_fit,
    structured_curves,
)
from ..runs import READINGS, TASKS, looped_run
from .core import STATUSES, claim, ordering, over_seeds, verdict

CH = "book/experiments"
CH_G = "book/experiments_looped"  # Fig. G.3, the looped model
# "exponential in L": R^2 within this of the power method's on the same points
R2_MARGIN = 0.02


def _exponential(curves) -> tuple[np.ndarray, list[str]]:
    """Per seed, the worst R^2 deficit against the power method's (over
    tasks and snapshots), and the median R^2 per task and snapshot."""
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


@claim(
    id="fig5-exponential",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Looping the LN layer's snapshots (T = 100, 300, 2000) for L = 1..25: "
        "'the error decays exponentially as the number of loops L increases' "
        "(both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"per seed: R^2 of log(median error over {POINTS} "
        f"test points) against L within {R2_MARGIN} of the power method's R^2 "
        "on the same "
        "points, every snapshot and task"
    ),
    chapter=CH,
)
def _fig5_exp():
    deficit, rows = _exponential(fig5_curves())
    return over_seeds(
        deficit,
        deficit <= R2_MARGIN,
        "worst R^2 deficit per seed; median R^2 " + "; ".join(rows),
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


@claim(
    id="fig5-median",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5 (over many test points)",
    statement=(
        f"Over {POINTS} test matrices per task, the median error of the LN "
        "layer's snapshots "
        "looped 25 times is ordered T = 100 above T = 300 above T = 2000 "
        "above the power "
        "method (both tasks)"
    ),
    paper="larger T closer to the power method",
    tolerance="the ordering over the seed ensemble (lnpower.claims.ordering)",
    chapter=CH,
    source="book",
)
def _fig5_median():
    status, rows = _ordered(fig5_curves(), lambda c: c[24])
    return status, status, "; ".join(rows)


@claim(
    id="fig5-closer-with-T",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Snapshots trained longer have error curves closer to the power "
        "method's (a faster per-loop rate) (both tasks)"
    ),
    paper="T = 2000 closest",
    tolerance=(
        f"per-loop rates fitted to the median error over {POINTS} test "
        "points, decreasing in T and above the power method's, over the seed "
        "ensemble "
        "(lnpower.claims.ordering)"
    ),
    chapter=CH,
)
def _fig5_order():
    status, rows = _ordered(fig5_curves(), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


@claim(
    id="fig5-exponential-epochs",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Fig. 5's 'the error decays exponentially' with T read as epochs "
        "(snapshots at 100, 300 and 2000 epochs), on the stored SGD runs"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        "as fig5-exponential, on the stored runs at the epoch reading (one "
        "seed)"
    ),
    chapter=CH,
)
def _fig5_exp_epochs():
    deficit, rows = _exponential(fig5_curves("epochs"))
    return over_seeds(
        deficit, deficit <= R2_MARGIN, "median R^2 " + "; ".join(rows)
    )


@claim(
    id="fig5-closer-with-T-epochs",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Fig. 5's 'models trained longer are closer to the power method' with "
        "T read as epochs, on the stored SGD runs"
    ),
    paper="T = 2000 closest",
    tolerance=(
        "as fig5-closer-with-T, on the stored runs at the epoch reading (one "
        "seed, so no spread: an ordering that holds is reproduced)"
    ),
    chapter=CH,
)
def _fig5_order_epochs():
    status, rows = _ordered(fig5_curves("epochs"), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


@claim(
    id="g3-exponential",
    ref="thm-4-7",
    where="Theorem 4.7; Appendix G.3",
    statement=(
        "The looped model (trained with L = 10, T = 2000) looped L = 1..25 "
        "times: 'the error decays exponentially as the number of layers L "
        "increases' (both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"per seed: R^2 of log(median error over {POINTS} test points) "
        "against L within "
        f"{R2_MARGIN} of the power method's on the same points, and the "
        "median error at "
        "L = 25 below that at L = 10, both tasks"
    ),
    chapter=CH_G,
)
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
        "worst R^2 deficit per seed; median R^2 "
        + "; ".join(rows)
        + f"; error falls from L = 10 to 25 for {int(falls.sum())} seeds",
    )


@claim(
    id="g3-exponential-epochs",
    ref="thm-4-7",
    where="Theorem 4.7; Appendix G.3",
    statement=(
        "G.3's sentence with T read as 2000 epochs (156 000 iterations), for "
        "the looped model that population gradient descent trains: structured "
        "weights with rho_T from the population recursion, looped L = 1..25 "
        "times (both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"R^2 of log(median error over {POINTS} test points) within "
        f"{R2_MARGIN} of the power "
        "method's, and the error at L = 25 below that at L = 10 (population; "
        "SGD at this "
        "reading takes about 70 min on 2 cores and is not run)"
    ),
    chapter=CH_G,
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
            f"{TASKS[t]}: rho_T {rho:.1f}, R^2 {r2:.3f} (power method "
            f"{pm:.3f})"
        )
    return (
        round(max(deficit), 4),
        verdict(max(deficit) <= R2_MARGIN),
        "; ".join(rows),
    )
