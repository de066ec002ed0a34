"""Claims of Parts III and IV (§4.3, §5, Appendix G): looping at inference,
the experiments."""

from __future__ import annotations

from functools import cache

import numpy as np
import torch

from .. import inference, shifts, tasks, theory
from ..config import PAPER
from ..runs import (
    ensemble,
    ensemble_size,
    paper_runs,
    paper_task,
    sample,
)
from ..tasks import Task
from .core import over_seeds, verdict

SNAPSHOTS = (*PAPER.snapshot_steps, PAPER.steps)  # Fig. 5
L_MAX = 25  # loops at inference in Figs. 5 and G.3
D, N = PAPER.d, PAPER.n


@cache
def test_points(
    count: int = 100, seed: int = 31
) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Test matrices with unit columns (Assumption 4.4): both tasks, two
    distributions without rotation invariance, and a rotated matrix whose
    top eigenvalue has multiplicity 2."""
    g = tasks.generator(seed)
    X = {
        "Task 1": paper_task("sphere").sample_X(count, g),
        "Task 2": paper_task("rotated").sample_X(count, g),
        "anisotropic": shifts.anisotropic(count, D, N, g),
        "low rank + noise": shifts.low_rank_noise(count, D, N, g),
        "top multiplicity 2": Task(
            "rotated", m=(3, 3) + (2,) * 12 + (1, 1)
        ).sample_X(count, g),
    }
    return {k: (x, tasks.query(count, D, g)) for k, x in X.items()}


def bound_violations(gamma, L_max: int = 25) -> tuple[int, int]:
    """How many (test point, L) pairs of the structured layer with this
    gamma (None: the power method) fall outside the bounds of Theorem
    4.6/4.7; returns (violations, total)."""
    bad = total = 0
    Ls = torch.arange(1, L_max + 1, dtype=torch.float64)[:, None]
    for X, a in test_points().values():
        P, _ = tasks.principal_projector(X)
        err = inference.sin_angle(
            inference.power_method(X, a, L_max, gamma), P
        )
        lo, hi, _ = inference.ood_bounds(X, a, Ls, gamma)
        ok = (lo * (1 - 1e-9) - 1e-14 <= err) & (
            err <= hi * (1 + 1e-9) + 1e-14
        )
        bad += int((~ok).sum())
        total += ok.numel()
    return bad, total


def _ood_bounds():
    h = paper_runs("layer")["sphere"]
    gammas = [float(h.product[t]) for t in SNAPSHOTS]
    gammas.append(
        theory.no_ln_optimum(sample("sphere"), "unnormalized")["gamma_star"]
    )
    counts = [bound_violations(g) for g in gammas] + [bound_violations(None)]
    bad, total = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return (
        bad,
        verdict(bad == 0),
        f"{total} checks; learned gammas "
        f"{', '.join(f'{g:.3f}' for g in gammas)}",
    )


def _ood_rate():
    X, _ = test_points()["Task 1"]
    lam = torch.linalg.eigvalsh(X @ X.mT).flip(-1).numpy()
    l1, l2 = lam[:, 0], lam[:, 1]
    g_star = theory.no_ln_optimum(sample("sphere"), "normalized")["gamma_star"]
    R_star = float(np.median(inference.contraction(l1, l2, g_star)))
    pm = float(np.median(l2 / l1))
    Rs = np.array(
        [
            [
                np.median(inference.contraction(l1, l2, float(h.product[t])))
                for t in SNAPSHOTS
            ]
            for h in ensemble("layer")["sphere"]
        ]
    )  # (seed, snapshot)
    holds = [a > b > c > pm and R_star > c for a, b, c in Rs]
    return over_seeds(
        Rs[:, -1],
        holds,
        "median R at T = 100, 300, 2000 (median over seeds): "
        + ", ".join(f"{r:.3f}" for r in np.median(Rs, axis=0))
        + f"; power method {pm:.3f}; no LN (gamma1*) {R_star:.3f}",
    )


def spearman(x, y) -> float:
    """Rank correlation of two samples."""
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


@cache
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
    X, a = Task("sphere", D, N).sample(points, tasks.generator(seed))
    err = inference.loop_errors(h.W, h.V, X, a, L_MAX)
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


def _fixed_direction():
    ms = [mechanism(run=s) for s in range(ensemble_size("looped"))]
    agree = np.array([m["agreement"] for m in ms])
    corr = np.array([m["correlation"] for m in ms])
    return over_seeds(
        agree,
        (agree < 0.01) & (corr < -0.5),
        f"median relative difference per seed; rank correlation "
        f"{corr.min():+.2f} to {corr.max():+.2f}; U-shaped curves over 25 "
        f"loops: {100 * np.median([m['u_fraction'] for m in ms]):.1f} % of "
        f"{ms[0]['points']} matrices (median over seeds)",
    )
