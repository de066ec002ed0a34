"""The chapter beyond (Part V): the looped model's long horizon, the LN
layer from a random start, and finite training sets."""

from __future__ import annotations

import numpy as np

from .. import dynamics, model, theory
from ..claims.status import STATUSES, ordering, over_seeds, verdict
from ..config import PAPER, paper_config
from ..train import fit_many
from .population import looped_run, sample


def random_init_runs(scale: float = 0.05, seeds=(0, 1, 2)):
    """LN layer from small Gaussian weights in every block (v0 = 0), trained
    together, cached."""
    return fit_many(
        [
            paper_config(model="layer", v0=0.0, init_scale=scale, seed=s)
            for s in seeds
        ],
        cache=True,
    )


def sample_size_runs(sizes=(100, 1000, 10_000), seed: int = 0):
    """LN layer at the paper's settings with training sets of several sizes
    (cached)."""
    return {
        N: fit_many(
            [paper_config(model="layer", train_size=N, seed=seed)], cache=True
        )[0]
        for N in sizes
    }


def beyond_looped_long_horizon():
    tab, (t, w, v) = looped_run(steps=10**7)
    sm = sample("sphere", 5_000, 1)
    p = dynamics.exponent(t, w * v, 1e6, 1e7)[0]
    limit = 4 * PAPER.lr * theory.c_L(sm, 10).value / PAPER.d
    ratio = dynamics.power_increment(tab, w[-1], v[-1], PAPER.lr, 2) / limit
    ok = abs(p - 0.5) < 0.005 and abs(ratio - 1) < 0.01
    return (
        round(p, 4),
        verdict(ok),
        f"exponent {p:.4f}, increment ratio {ratio:.4f} at t = 10^7",
    )


def beyond_random_init():
    runs = random_init_runs()
    final = np.array([model.structure_residual(h.W, h.V).item() for h in runs])
    start = [model.structure_residual(*h.snapshots[0]).item() for h in runs]
    drops = np.array(start) / final
    losses = np.array([h.test_loss[-1] for h in runs])
    return over_seeds(
        drops,
        (drops > 10) & (losses < 0.05) & (final > 0.1),
        quantity="the factor by which the structure residual falls",
        detail="test losses " + ", ".join(f"{x:.4f}" for x in losses),
    )


def beyond_finite_samples():
    runs = [sample_size_runs(seed=s) for s in range(3)]
    gaps = {
        N: [r[N].test_loss[-1] - r[N].train_loss[-1] for r in runs]
        for N in runs[0]
    }
    noise = {
        N: [model.structure_residual(r[N].W, r[N].V).item() for r in runs]
        for N in runs[0]
    }
    (s1, l1), (s2, l2) = ordering(gaps), ordering(noise)
    status = s1 if s1 == s2 else max(s1, s2, key=STATUSES.index)
    return (
        round(float(np.median(gaps[100])), 4),
        status,
        f"gaps: {l1}; residuals: {l2}",
    )
