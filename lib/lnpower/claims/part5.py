"""The book's own claims (Part V, beyond the paper)."""

from __future__ import annotations

import numpy as np

from .. import dynamics, inference, model, theory
from ..config import PAPER
from ..runs import (
    ETA,
    ensemble,
    looped_run,
    paper_task,
    random_init_runs,
    sample,
    sample_size_runs,
)
from ..tasks import generator, principal_projector
from .core import STATUSES, ordering, over_seeds, verdict


def _looped_long():
    tab, (t, w, v) = looped_run(steps=10**7)
    sm = sample("sphere", 5_000, 1)
    p = dynamics.exponent(t, w * v, 1e6, 1e7)[0]
    limit = 4 * ETA * theory.c_L(sm, 10).value / PAPER.d
    ratio = dynamics.power_increment(tab, w[-1], v[-1], ETA, 2) / limit
    ok = abs(p - 0.5) < 0.005 and abs(ratio - 1) < 0.01
    return (
        round(p, 4),
        verdict(ok),
        f"exponent {p:.4f}, increment ratio {ratio:.4f} at t = 10^7",
    )


def _random_init():
    runs = random_init_runs()
    final = np.array([model.structure_residual(h.W, h.V).item() for h in runs])
    start = [model.structure_residual(*h.snapshots[0]).item() for h in runs]
    drops = np.array(start) / final
    losses = np.array([h.test_loss[-1] for h in runs])
    return over_seeds(
        drops,
        (drops > 10) & (losses < 0.05) & (final > 0.1),
        "factor by which the residual falls; test losses "
        + ", ".join(f"{x:.4f}" for x in losses),
    )


def _finite():
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


def _depth():
    X, a = paper_task("sphere").sample(100, generator(41))
    P, _ = principal_projector(X)
    gains, predicted = [], []
    for h in ensemble("looped")["sphere"]:
        err = inference.loop_errors(h.W, h.V, X, a, 60)
        iterates = inference.power_method(X, a, 60, float(h.product[-1]))
        structured = inference.sin_angle(iterates, P).numpy()
        gains.append(np.median(err[9]) / np.median(err[59]))
        predicted.append(np.median(structured[9]) / np.median(structured[59]))
    gains, predicted = np.array(gains), np.array(predicted)
    return over_seeds(
        gains,
        (gains > 1) & (gains < predicted / 10),
        f"error ratio L'=10 to 60 of the trained model; structured layer "
        f"{predicted.min():.2f} to {predicted.max():.2f}",
    )
