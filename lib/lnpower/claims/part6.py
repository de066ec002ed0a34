"""The book's claims about where the theorems hold (Part V, chapter
``where``), measured on the grid's subset that the chapter trains (d = 4
and 8, n = d/2 to 8d, eta = 0.1, 3 seeds; ``lnpower.where``)."""

from __future__ import annotations

import numpy as np

from .. import where
from .core import over_seeds, verdict


def per_seed(setup: str, value) -> np.ndarray:
    """``value(row)`` worst (largest) over the subset's points, per seed."""
    rows = [r for r in where.table(False) if r["setup"] == setup]
    return np.array(
        [max(value(r) for r in rows if r["seed"] == s) for s in where.SEEDS]
    )


def _ln_recursion():
    dev = per_seed(
        "LN layer", lambda r: abs(r["product"] / r["ln_gamma_T"] - 1)
    )
    return over_seeds(
        dev, dev < 0.1, "value: the largest relative deviation of a seed"
    )


def _no_ln_gap():
    gaps = {
        d: [
            where.predictions(d, n, 0.1)["loss_star"]
            for dd, n in where.points()
            if dd == d
        ]
        for d in where.DS
    }
    falling = all(np.all(np.diff(g) < 0) for g in gaps.values())
    last = min(g[-1] for g in gaps.values())
    return (
        round(last, 4),
        verdict(falling and last > 0.05),
        "L* from n = d/2 to 8d: "
        + "; ".join(
            f"d = {d}: {g[0]:.3f} to {g[-1]:.3f}" for d, g in gaps.items()
        ),
    )


def _looped_rate():
    ratio = per_seed("looped", lambda r: r["learned_rate"] / r["power_rate"])
    return over_seeds(
        ratio, ratio < 0.75, "value: a seed's largest learned / power rate"
    )
