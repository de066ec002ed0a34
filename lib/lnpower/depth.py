"""Looping a trained layer at inference, measured as Figs. 5 and G.3 do:
median error curves over fixed test matrices, against the power method's on
the same matrices, and the semi-log fit that reads a per-loop rate."""

from __future__ import annotations

from functools import cache

import numpy as np

from . import inference, stored, tasks
from .config import PAPER
from .runs import ensemble, paper_task

# test matrices per task and seed, where the paper loops on one (Figs. 5, G.3)
POINTS = 100


@cache
def points(task: str, count: int = POINTS, seed: int = PAPER.seed + 8):
    """The test matrices of Figs. 5 and G.3: ``count`` draws of the task
    (seeded)."""
    return paper_task(task).sample(count, tasks.generator(seed))


def median_error(W, V, task: str, L_max: int = 25) -> np.ndarray:
    """Median sin(phi_L) over :func:`points`, L = 1..L_max, of (W, V)
    looped."""
    X, a = points(task)
    return np.median(inference.loop_errors(W, V, X, a, L_max), axis=1)


@cache
def power_method_median(task: str, L_max: int = 25) -> np.ndarray:
    """Median sin(phi_L) of the power method on the same points."""
    X, a = points(task)
    P = tasks.principal_projector(X)[0]
    return np.median(
        inference.sin_angle(inference.power_method(X, a, L_max), P).numpy(),
        axis=1,
    )


def semilog_fit(err) -> tuple[float, float]:
    """Per-loop rate and explained variance (EV, the coefficient of
    determination) of a straight line through log(err) against L."""
    L, y = np.arange(1, len(err) + 1), np.log(err)
    coef = np.polyfit(L, y, 1)
    resid = y - np.polyval(coef, L)
    return float(np.exp(coef[0])), float(1 - resid.var() / y.var())


@cache
def fig5_curves(reading: str = "iterations") -> dict:
    """Per task, per seed, the median error curves of Fig. 5's snapshots and
    the power method's, ``{task: [{T: curve, ..., "power method": curve},
    ...]}``: of the LN layer's seed ensemble (``"iterations"``) or of its
    stored run at the epoch reading (``"epochs"``). Computed once per
    process: three claims read them."""
    histories = (
        ensemble("layer") if reading == "iterations" else stored.load("layer")
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


def g3_curves(histories: dict | None = None) -> dict:
    """Per task, per seed of the looped model, its median error curve (L =
    1..25) over :func:`points`, and the power method's."""
    histories = histories or ensemble("looped")
    return {
        t: [
            {
                "looped model": median_error(h.W, h.V, t),
                "power method": power_method_median(t),
            }
            for h in hs
        ]
        for t, hs in histories.items()
    }


def structured_curves(gammas: dict, task: str) -> dict:
    """Median error curves (L = 1..25) over :func:`points` of structured
    layers, one per ``gammas`` entry (label -> gamma or rho): the shifted
    power method (4.2)."""
    X, a = points(task)
    P = tasks.principal_projector(X)[0]
    return {
        k: np.median(
            inference.sin_angle(
                inference.power_method(X, a, 25, g), P
            ).numpy(),
            axis=1,
        )
        for k, g in gammas.items()
    }
