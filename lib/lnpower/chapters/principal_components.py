"""The chapter principal_components (§3.1): Assumption 3.2 and Example 3.3
checked on the samplers, and the test of rotation invariance."""

from __future__ import annotations

import torch

from .. import tasks, theory
from ..claims.status import verdict
from ..config import PAPER, paper_task
from ..tasks import Task


def a1_unit_columns():
    g = tasks.generator(11)
    norms = [
        torch.linalg.vector_norm(paper_task(t).sample_X(2000, g), dim=-2)
        for t in ("sphere", "rotated")
    ]
    err = max((x - 1).abs().max().item() for x in norms)
    return (
        err,
        verdict(err < 1e-12),
        f"the largest | |column| - 1 | over 2000 draws of each task: "
        f"{err:.1e}",
    )


def invariance_z(stat, X: torch.Tensor, Q: torch.Tensor) -> float:
    """z-score of the difference of the means of ``stat`` before and after
    the rotation Q; samples are split in half so the two means are
    independent."""
    h = len(X) // 2
    s1, s2 = stat(X[:h]), stat(Q @ X[h:])
    return float(
        (s1.mean() - s2.mean()).abs() / (s1.var() / h + s2.var() / h).sqrt()
    )


def a2_rotation_invariance():
    g = tasks.generator(12)
    Q = tasks.haar(1, PAPER.d, g)[0]
    lam1 = lambda X: torch.linalg.eigvalsh(X @ X.mT)[:, -1]  # noqa: E731
    row = lambda X: (X[:, 0] ** 2).mean(-1)  # noqa: E731
    zs = [
        invariance_z(f, paper_task(t).sample_X(20_000, g), Q)
        for t in ("sphere", "rotated")
        for f in (lam1, row)
    ]
    control = invariance_z(
        row, tasks.anisotropic(20_000, PAPER.d, PAPER.n, g), Q
    )
    ok = max(zs) < 4 and control > 10
    return (
        round(max(zs), 3),
        verdict(ok),
        f"largest |z| for the tasks {max(zs):.2f}; anisotropic control |z| = "
        f"{control:.1f}",
    )


def a3_fails_at_n_equals_d():
    square = Task("sphere", PAPER.d, PAPER.d)  # Fig. 3's d = n = 16
    alpha = theory.tail_index(
        1 / theory.smallest_eigenvalues(square, 40_000, 13)
    )
    ok = alpha.value + 3 * alpha.stderr < 1
    return (
        round(alpha.value, 3),
        verdict(ok),
        f"tail index {alpha:.3f} (theory 0.5): E[1/lambda_d] = inf, (A3) "
        "fails",
    )


def example_3_3():
    g = tasks.generator(14)
    U = tasks.unit_sphere((8, 20), g)
    lam_U = torch.linalg.eigvalsh(U @ U.T)
    X = tasks.rotated(U, 500, g)
    lam = torch.linalg.eigvalsh(X @ X.mT)
    dev = ((lam - lam_U) / lam_U).abs().max().item()
    ups = (1 / lam[:, 0]).mean().item() * lam_U[0].item()
    return (
        dev,
        verdict(dev < 1e-10 and abs(ups - 1) < 1e-10),
        f"E[1/lambda_d] * lambda_min(UU^T) = {ups:.12f}",
    )


def rejection_sample(task: Task, count: int, threshold: float, g):
    """§3.1's remark: draws of ``task`` whose smallest eigenvalue of X X^T
    is at least ``threshold`` (the others rejected), and the acceptance
    rate."""
    out, drawn = [], 0
    while sum(len(x) for x in out) < count:
        X = task.sample_X(count, g)
        drawn += count
        lam_d = torch.linalg.eigvalsh(X @ X.mT)[:, 0]
        out.append(X[lam_d >= threshold])
    X = torch.cat(out)[:count]
    return X, sum(len(x) for x in out) / drawn


def a3_by_rejection():
    """§3.1: from a distribution with (A1) and (A2), rejecting the samples
    whose d-th eigenvalue is below a threshold gives data with (A1)-(A3).
    Task 1 at d = n = 16 (where (A3) fails): rejected below 0.01, the
    columns keep unit norm, the rotation test of (A2) still passes, and
    1/lambda_d is bounded by 100."""
    square = Task("sphere", PAPER.d, PAPER.d)
    g = tasks.generator(15)
    X, rate = rejection_sample(square, 20_000, 0.01, g)
    Q = tasks.haar(1, PAPER.d, g)[0]
    lam1 = lambda X: torch.linalg.eigvalsh(X @ X.mT)[:, -1]  # noqa: E731
    z = invariance_z(lam1, X, Q)
    unit = (torch.linalg.vector_norm(X, dim=-2) - 1).abs().max().item()
    inv = 1 / torch.linalg.eigvalsh(X @ X.mT)[:, 0]
    ok = z < 4 and unit < 1e-12 and inv.max() <= 100
    return (
        round(z, 3),
        verdict(ok),
        f"acceptance {100 * rate:.1f} %; (A2) z = {z:.2f}; E[1/lambda_d] = "
        f"{inv.mean():.2f} (at most 100)",
    )
