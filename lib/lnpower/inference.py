"""Looping a trained layer at inference (§4.3, Theorems 4.6 and 4.7, Appendices
D and E): the power method, the angle to the principal subspace, the
contraction factors and the bounds."""

from __future__ import annotations

import numpy as np
import torch

from .model import NormSpec, looped, output
from .norms import layernorm
from .tasks import embed, principal_projector, spectrum, top_mask


def contraction(lam1, lam_next, gamma=None):
    """R = (1 + gamma lam_{r+1})/(1 + gamma lam_1); the power method's
    lam_{r+1}/lam_1 when gamma is None (the limit gamma -> inf)."""
    if gamma is None:
        return lam_next / lam1
    return (1 + gamma * lam_next) / (1 + gamma * lam1)


def ood_bounds(
    X: torch.Tensor, a: torch.Tensor, L, gamma=None, rtol: float = 1e-8
):
    """Bounds of Theorems 4.6/4.7 on sin(angle(y_L, Z)) for y_L ∝ (I +
    gamma S)^L a (or S^L a when gamma is None): ``(|c_{r+1}| R^L,
    ||a_perp||/||a_Z|| R^L, R)``. X ``(..., d, n)``, a ``(..., d)``; L an
    int or a tensor that broadcasts against the batch. Floats for a single
    test point, float64 tensors for a batch."""
    lam, vec = spectrum(X.to(torch.float64))
    c = (vec.mT @ a.to(torch.float64).unsqueeze(-1))[..., 0]
    top = top_mask(lam, rtol)
    r = top.sum(-1, keepdim=True)
    if (r == lam.shape[-1]).any():
        raise ValueError(
            "S has a single eigenvalue: no principal subspace to converge to"
        )
    lam_next = lam.gather(-1, r)[..., 0]
    R = contraction(lam[..., 0], lam_next, gamma)
    a_z = torch.linalg.vector_norm(c * top, dim=-1)
    a_perp = torch.linalg.vector_norm(c * ~top, dim=-1)
    if (a_z == 0).any():
        raise ValueError("a is orthogonal to the principal subspace (a_Z = 0)")
    RL = R ** torch.as_tensor(L, dtype=torch.float64)
    lower, upper = c.gather(-1, r)[..., 0].abs() * RL, a_perp / a_z * RL
    if lower.dim() == 0:
        return float(lower), float(upper), float(R)
    return lower, upper, R


def power_method(
    X: torch.Tensor, a: torch.Tensor, L: int, gamma=None
) -> torch.Tensor:
    """Iterates ``(I + gamma S)^l a / ||.||`` (or ``S^l a / ||.||``), l =
    1..L: ``(L, ..., d)``."""
    S = X @ X.mT
    if gamma is not None:
        S = torch.eye(S.shape[-1], dtype=S.dtype) + gamma * S
    out, y = [], a
    for _ in range(L):
        y = (S @ y.unsqueeze(-1))[..., 0]
        y = y / torch.linalg.vector_norm(y, dim=-1, keepdim=True)
        out.append(y)
    return torch.stack(out)


def sin_angle(y: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """sin of the canonical angle between y and the subspace whose
    projector ``P`` is (Proj_V in the book)."""
    y = y / torch.linalg.vector_norm(y, dim=-1, keepdim=True)
    perp = (
        y - (P @ y.unsqueeze(-1))[..., 0]
    )  # ||y - Py||, accurate where 1 - cos^2 is not
    return torch.linalg.vector_norm(perp, dim=-1)


def loop_errors(
    W: torch.Tensor,
    V: torch.Tensor,
    X: torch.Tensor,
    a: torch.Tensor,
    L: int,
    norm: NormSpec = layernorm,
) -> np.ndarray:
    """sin of the angle between y_l and the principal subspace of X X^T for
    l = 1..L, when the layer (W, V) is looped at inference on test points X
    ``(K, d, n)``, a ``(K, d)`` (Theorems 4.6, 4.7; Figs. 5, G.3). Returns
    ``(L, K)``."""
    E = embed(X.double(), a.double())
    P, _ = principal_projector(X.double())
    states = looped(E, W.double(), V.double(), L, norm, return_all=True)
    return torch.stack([sin_angle(output(s), P) for s in states]).numpy()


def learned_map(
    W: torch.Tensor, V: torch.Tensor, X: torch.Tensor
) -> torch.Tensor:
    """``M = I + V21 S W12`` for test matrices X ``(K, d, n)``: ``(K, d,
    d)``.

    For weights whose blocks other than W12 and V21 are zero (exactly what
    SGD from the paper's initialisation keeps), one loop maps the query a
    -> M a/||M a|| and leaves X unchanged, so looping is the power method
    on M. For W12 = w I, V21 = v I it is the shifted power step I + wv S."""
    d = X.shape[-2]
    W12, V21 = W[:d, d:].double(), V[d:, :d].double()
    eye = torch.eye(d, dtype=torch.float64)
    return eye + V21 @ (X.double() @ X.double().mT) @ W12


def fixed_direction(M: torch.Tensor, X: torch.Tensor):
    """Where looping ``a -> M a/||M a||`` ends up on each test matrix: the
    sine of the angle between the dominant eigenvector of M (largest
    ``|eigenvalue|``) and the principal subspace of X X^T, and
    ``|mu_2/mu_1|``, the per-loop rate of that convergence. Returns numpy
    arrays ``(floor, rate)``."""
    mu, vec = torch.linalg.eig(M)
    order = mu.abs().argsort(dim=-1, descending=True)
    top = vec.gather(
        -1, order[..., :1].unsqueeze(-2).expand(*vec.shape[:-1], 1)
    )[..., 0]
    u = top.real / torch.linalg.vector_norm(top.real, dim=-1, keepdim=True)
    P, _ = principal_projector(X.double())
    absmu = mu.abs().gather(-1, order)
    return sin_angle(u, P).numpy(), (absmu[..., 1] / absmu[..., 0]).numpy()
