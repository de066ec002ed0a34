"""Looping a trained layer at inference, measured as Figs. 5 and G.3 do:
median error curves over fixed test matrices against the power method's on
the same matrices, the semi-log fit that reads a per-loop rate and tests
"exponential in L", and where SGD-trained weights go when looped on (the
fixed direction of the learned map)."""

from __future__ import annotations

import numpy as np
import torch

from .. import inference, tasks
from ..cache import memo
from ..config import INFERENCE_LOOPS, PAPER, paper_task
from ..tasks import TASK_NAMES, Task
from .ensembles import paper_runs

# test matrices per task and seed, where the paper loops on one (Figs. 5, G.3)
POINTS = 100
# "exponential in L": EV within this of the power method's on the same points
R2_MARGIN = 0.02


@memo
def points(task: str, count: int = POINTS, seed: int = PAPER.seed + 8):
    """The test matrices of Figs. 5 and G.3: ``count`` draws of the task
    (seeded)."""
    return paper_task(task).sample(count, tasks.generator(seed))


def median_error(W, V, task: str, L_max: int = INFERENCE_LOOPS) -> np.ndarray:
    """Median sin(phi_L) over :func:`points`, L = 1..L_max, of (W, V)
    looped."""
    X, a = points(task)
    return np.median(inference.loop_errors(W, V, X, a, L_max), axis=1)


@memo
def power_method_median(task: str, L_max: int = INFERENCE_LOOPS) -> np.ndarray:
    """Median sin(phi_L) of the power method on the same points."""
    return structured_curves({"power method": None}, task, L_max)[
        "power method"
    ]


def structured_curves(
    gammas: dict, task: str, L_max: int = INFERENCE_LOOPS
) -> dict[str, np.ndarray]:
    """Median error curves (L = 1..L_max) over :func:`points` of structured
    layers, one per ``gammas`` entry (label -> gamma or rho; None: the power
    method): the shifted power method (4.2)."""
    X, a = points(task)
    P = tasks.principal_projector(X)[0]
    return {
        k: np.median(
            inference.sin_angle(
                inference.power_method(X, a, L_max, g), P
            ).numpy(),
            axis=1,
        )
        for k, g in gammas.items()
    }


def semilog_fit(err) -> tuple[float, float]:
    """Per-loop rate and explained variance (EV, the coefficient of
    determination) of a straight line through log(err) against L."""
    L, y = np.arange(1, len(err) + 1), np.log(err)
    coef = np.polyfit(L, y, 1)
    resid = y - np.polyval(coef, L)
    return float(np.exp(coef[0])), float(1 - resid.var() / y.var())


def exponential_deficit(curves) -> tuple[np.ndarray, list[str]]:
    """Per seed, the worst EV deficit of the curves against the power
    method's (over tasks and curves; ``curves``: ``{task: [{label: curve,
    ..., "power method": curve}, ...]}``), and the median EV per task and
    curve."""
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
            f"{TASK_NAMES[t]}: "
            + ", ".join(
                f"{k} {np.median([r[k] for r in r2]):.3f}" for k in r2[0]
            )
        )
    return np.max(deficit, axis=0), rows


def spearman(x, y) -> float:
    """Rank correlation of two samples."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


@memo
def mechanism(
    model: str = "looped",
    points: int = 1000,
    seed: int = 51,
    long: int = 400,
    run: int = 0,
) -> dict:
    """Where SGD-trained weights (the looped model, or the LN layer at T =
    2000) go when looped at inference on Task 1 test matrices: per matrix
    the eigengap, the sine of the angle of the dominant eigenvector of the
    learned map M = I + V21 S W12 to the principal subspace (``floor``), the
    error after 25 loops, whether the error curve over 25 loops is U-shaped,
    and how well the error after ``long`` loops matches the floor. ``run``:
    the seed of the trained run."""
    h = paper_runs(model, run)["sphere"]
    X, a = Task("sphere", PAPER.d, PAPER.n).sample(
        points, tasks.generator(seed)
    )
    err = inference.loop_errors(h.W, h.V, X, a, INFERENCE_LOOPS)
    floor, _ = inference.fixed_direction(inference.learned_map(h.W, h.V, X), X)
    lam = torch.linalg.eigvalsh(X @ X.mT).flip(-1).numpy()
    far = inference.loop_errors(h.W, h.V, X[:200], a[:200], long)[-1]
    return {
        "points": points,
        "gap": (lam[:, 0] - lam[:, 1]) / lam[:, 0],
        "floor": floor,
        "error_25": err[-1],
        "u_shaped": err[-1] > 2 * err.min(0),
        "u_fraction": float(np.mean(err[-1] > 2 * err.min(0))),
        "agreement": float(np.median(np.abs(far / floor[:200] - 1))),
        "correlation": spearman(floor, (lam[:, 0] - lam[:, 1]) / lam[:, 0]),
    }
