"""The chapter transformer (§3.2, the display of E^(1) in §4.1): the
structured layer is a shifted power step, and the power method itself as
rho -> infinity."""

from __future__ import annotations

import numpy as np

from .. import inference, model, tasks
from ..claims.status import verdict
from ..tasks import Task


def structured_sample(
    seed: int = 21, count: int = 64, d: int = 8, n: int = 16
):
    """Task 1 draws ``(X, a, E)`` on which the structured layer is
    checked."""
    X, a = Task("sphere", d, n).sample(count, tasks.generator(seed))
    return X, a, tasks.embed(X, a)


def structured_layer_is_power_step():
    X, a, E = structured_sample()
    W, V = model.structured(8, 0.7, 1.3)
    states = model.looped(E, W, V, 20, return_all=True)
    shifted = inference.power_method(X, a, 20, gamma=0.7 * 1.3)
    dev = max(
        (model.output(s) - p).abs().max().item()
        for s, p in zip(states, shifted)
    )
    dev_X = max((s[..., :8, :16] - X).abs().max().item() for s in states)
    worst = max(dev, dev_X)
    return (
        worst,
        verdict(worst < 1e-10),
        f"y_L vs shifted power iteration {dev:.1e}; X block {dev_X:.1e}",
    )


def rho_to_infinity_power_method():
    X, a, E = structured_sample()
    pm = inference.power_method(X, a, 1)[0]
    rhos = np.array([1e2, 1e3, 1e4, 1e5])
    errs = []
    for rho in rhos:
        W, V = model.structured(8, rho, 1.0)
        errs.append(
            (model.output(model.layer(E, W, V)) - pm).norm(dim=-1).max().item()
        )
    slope = np.polyfit(np.log(rhos), np.log(errs), 1)[0]
    return (
        round(float(slope), 4),
        verdict(abs(slope + 1) < 0.05),
        f"log-log slope {slope:.3f}; error at rho = 1e2..1e5: "
        + ", ".join(f"{e:.1e}" for e in errs),
    )
