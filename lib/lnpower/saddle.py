"""Beyond Theorem 4.2: is the no-LN layer's fixed point stable off the
structured family?

Theorem 4.2 describes gradient descent inside the family W12 = alpha I, V21
= beta I (all other blocks zero), where it converges to alpha beta = gamma*.
Finite-sample SGD is not confined to that family: its noise puts small
off-diagonal entries into W12 and V21. Whether they shrink or grow is
decided by the population loss's Hessian at the fixed point in those
directions.

With W12 = alpha I + eps A, V21 = beta I + eps B the prediction is ``y = a +
gamma S a + eps (beta S A a + alpha B S a) + eps^2 B S A a``, so the second
derivative of ``E||y - t||^2`` at eps = 0 is the quadratic form

    h(A, B) = E[2 ||beta S A a + alpha B S a||^2 + 4 (y - t)^T B S A a].

By rotation invariance (A2) this form is a multiple of the identity on each
irreducible subspace of d x d matrices under conjugation: multiples of I
(the family itself), symmetric traceless and antisymmetric matrices. On
each, it is a 2 x 2 matrix in (A, B), estimated here by Monte Carlo from one
representative A = B.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from . import dynamics
from .tasks import Task, generator, targets

DIRECTIONS = ("identity", "symmetric traceless", "antisymmetric")


def representative(kind: str, d: int) -> torch.Tensor:
    """A unit (Frobenius) matrix of each irreducible subspace."""
    M = torch.zeros(d, d, dtype=torch.float64)
    if kind == "identity":
        return torch.eye(d, dtype=torch.float64) / math.sqrt(d)
    M[0, 1] = 1.0
    M[1, 0] = 1.0 if kind == "symmetric traceless" else -1.0
    if kind not in DIRECTIONS:
        raise ValueError(
            f"direction must be one of {DIRECTIONS}, got {kind!r}"
        )
    return M / math.sqrt(2)


def hessian_blocks(
    task: Task,
    points: dict[str, tuple[float, float]],
    samples: int = 200_000,
    seed: int = 0,
    chunk: int = 50_000,
) -> dict:
    """At each fixed point ``points[target] = (alpha, beta)`` of the layer
    trained on that target (alpha, beta: the no-LN weights alpha~, beta~):
    for each kind of direction B (``DIRECTIONS``) the 2 x 2 matrix H of the
    loss's second derivative along (W12, V21) = (alpha I + b_W eps B,
    beta I + b_V eps B) in (b_W, b_V), its eigenvalues and the
    largest standard error of its entries (Monte Carlo, float64, one sample
    shared by the targets). Returns ``{target: {kind: {...}}}``.

    Per sample, with w1 = b_W beta S B a + b_V alpha B S a and
    w2 = b_W b_V B S B a, the second derivative of ||y - t||^2 is
    2 ||w1||^2 + 4 (y - t)^T w2."""
    g = generator(seed)
    parts = {(t, k): [] for t in points for k in DIRECTIONS}
    for start in range(0, samples, chunk):
        X, a = task.sample(min(chunk, samples - start), g)
        S = X @ X.mT
        Sa = (S @ a.unsqueeze(-1))[..., 0]
        for kind in DIRECTIONS:
            M = representative(kind, task.d)
            SMa = (S @ (a @ M.T).unsqueeze(-1))[..., 0]  # S M a
            MSMa, MSa = SMa @ M.T, Sa @ M.T
            for target, (alpha, beta) in points.items():
                resid = a + alpha * beta * Sa - targets(X, a, target)
                p, q = beta * SMa, alpha * MSa
                curv = (resid * MSMa).sum(-1)  # (y - t)^T M S M a
                parts[target, kind].append(
                    torch.stack(
                        [
                            2 * (p * p).sum(-1),
                            2 * (p * q).sum(-1) + 2 * curv,
                            2 * (q * q).sum(-1),
                        ],
                        -1,
                    )
                )
    out = {t: {} for t in points}
    for (target, kind), chunks in parts.items():
        x = torch.cat(chunks).numpy()
        (ss, su, uu), se = x.mean(0), x.std(0, ddof=1) / math.sqrt(len(x))
        H = np.array([[ss, su], [su, uu]])
        out[target][kind] = {
            "matrix": H,
            "eigenvalues": np.linalg.eigvalsh(H),
            "stderr": float(se.max()),
        }
    return out


def divergence_threshold(
    kappa2: float, gamma_star: float, d: int, steps: int = 500
) -> float:
    """eta_div: the largest step size at which the no-LN population
    recursion (Appendix B.2.3, from (alpha, beta) = (0, 1)) reaches gamma*
    to 1e-6 in ``steps`` steps; above it the error's factor 1 - 2 eta kappa2
    Q*/d passes -1 and the recursion diverges or oscillates. Bisection on
    [0.1, 6] to 1e-4."""
    F = dynamics.no_ln_F(kappa2, gamma_star, d)

    def converges(eta: float) -> bool:
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                _, w, v = dynamics.run(F, 0.0, 1.0, eta, steps)
        except FloatingPointError:
            return False
        return abs(w[-1] * v[-1] / gamma_star - 1) < 1e-6

    lo, hi = 0.1, 6.0
    while hi - lo > 1e-4:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if converges(mid) else (lo, mid)
    return lo
