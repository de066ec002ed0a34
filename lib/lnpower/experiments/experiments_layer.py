"""The chapter experiments_layer (§5, Appendix G: Figs. 2, 4, 5, 6 and
7): the single layer with and without LN trained by SGD at the paper's
settings over seed ensembles, and the LN layer's runs at the epoch reading
of T: the losses against the no-LN floors, the growth of alpha and beta,
looping the snapshots at inference, and the no-LN fixed points."""

from __future__ import annotations

import numpy as np

from ..cache import memo
from ..claims.status import STATUSES, ordering, over_seeds
from ..tasks import POWER_STEP_TARGETS, TASK_NAMES, TASKS
from . import epoch_runs
from .ensembles import ensemble
from .loop_curves import (
    R2_MARGIN,
    exponential_deficit,
    median_error,
    power_method_median,
    semilog_fit,
)
from .measurements import (
    at_fixed_point,
    growth_claim,
    population_growth,
    sgd_slopes,
    spelled,
)


def fig2_ln_below():
    ln, worst, rows = ensemble("layer"), "reproduced", []
    plain = [
        ensemble("layer", norm="none", target=t)
        for t in ("normalized", "unnormalized")
    ]
    for t in TASKS:
        best = np.minimum(
            *([h.train_loss[-1] for h in runs[t]] for runs in plain)
        )
        status, line = ordering(
            {
                "better no-LN": list(best),
                "LN": [h.train_loss[-1] for h in ln[t]],
            }
        )
        worst = max(worst, status, key=STATUSES.index)
        rows.append(f"{TASK_NAMES[t]}: {status}: {line}")
    return worst, worst, "; ".join(rows)


def fig4_growth_sixth():
    return growth_claim("layer", 1 / 6)


def fig4_growth_sixth_epochs():
    runs = epoch_runs.load("layer")
    worst = [
        max(abs(x * 6 - 1) for t in TASKS for x in sgd_slopes(runs[t][s]))
        for s in range(len(runs["sphere"]))
    ]
    _, rows = population_growth("layer", 1 / 6)
    med = {t: sgd_slopes(runs[t][0]) for t in TASKS}
    return over_seeds(
        worst,
        np.array(worst) <= 0.2,
        "SGD seed 0: "
        + "; ".join(
            f"{TASK_NAMES[t]}: alpha {x:.3f}, beta {y:.3f}"
            for t, (x, y) in med.items()
        )
        + "; population: "
        + "; ".join(rows),
    )


@memo
def fig5_curves(reading: str = "iterations") -> dict:
    """Per task, per seed, the median error curves of Fig. 5's snapshots and
    the power method's, ``{task: [{T: curve, ..., "power method": curve},
    ...]}``: of the LN layer's seed ensemble (``"iterations"``) or of its
    stored run at the epoch reading (``"epochs"``). Computed once per
    process: three claims read them."""
    histories = (
        ensemble("layer")
        if reading == "iterations"
        else epoch_runs.load("layer")
    )
    out = {}
    for t, hs in histories.items():
        snaps = (*hs[0].config.snapshot_steps, hs[0].config.steps)
        out[t] = [
            {
                **{T: median_error(*h.snapshots[T], t) for T in snaps},
                "power method": power_method_median(t),
            }
            for h in hs
        ]
    return out


def fig5_exponential():
    deficit, rows = exponential_deficit(fig5_curves())
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
        rows.append(f"{TASK_NAMES[t]}: {status}: {line}")
    return worst, rows


def fig5_median():
    status, rows = _ordered(fig5_curves(), lambda c: c[24])
    return status, status, "; ".join(rows)


def fig5_closer_with_T():
    status, rows = _ordered(fig5_curves(), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


def fig5_exponential_epochs():
    deficit, rows = exponential_deficit(fig5_curves("epochs"))
    return over_seeds(
        deficit, deficit <= R2_MARGIN, "median EV " + "; ".join(rows)
    )


def fig5_closer_with_T_epochs():
    status, rows = _ordered(fig5_curves("epochs"), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


def figs6_7_fixed_points():
    ok, rows = [], []
    for target in POWER_STEP_TARGETS:
        for t, hs in ensemble("layer", norm="none", target=target).items():
            fine = np.array([at_fixed_point(h, t, target)[0] for h in hs])
            ok.append(fine)
            rows.append(
                f"{TASK_NAMES[t]}/{spelled(target)}: holds for "
                f"{int(fine.sum())} of {len(hs)} "
                f"(seed 0: {at_fixed_point(hs[0], t, target)[1]})"
            )
    ok = np.all(ok, axis=0)
    return over_seeds(
        ok.astype(float),
        ok,
        "the value is 1 where all four runs hold; " + "; ".join(rows),
    )


def figs6_7_fixed_points_epochs():
    rows, ok = [], True
    for target in POWER_STEP_TARGETS:
        for t, (h,) in epoch_runs.load(f"no-ln-{target}").items():
            fine, text = at_fixed_point(h, t, target)
            ok &= fine
            rows.append(
                f"{TASK_NAMES[t]}/{spelled(target)}: "
                f"{'holds' if fine else 'fails'} ({text})"
            )
    return over_seeds([float(ok)], [ok], "; ".join(rows))
