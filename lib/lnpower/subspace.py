"""The principal subspace (Definition 3.1), the targets (4.4) and the
losses: the spectrum of S = X X^T, which eigenvalues count as the top one,
the projector onto V(X), the per-sample targets and the per-sample losses
the three models are trained on."""

from __future__ import annotations

import torch

TARGETS = ("subspace", "normalized", "unnormalized")


def spectrum(X: torch.Tensor):
    """Eigenvalues (descending) and eigenvectors (columns, same order) of S
    = X X^T (Def. 3.1)."""
    lam, vec = torch.linalg.eigh(X @ X.mT)
    return lam.flip(-1), vec.flip(-1)


def top_mask(lam, rtol: float = 1e-8):
    """Which eigenvalues (descending along the last axis) belong to the top
    one, lambda_1 = ... = lambda_r (Definition 3.1): those within ``rtol *
    lambda_1`` of it. Works on torch tensors and numpy arrays alike."""
    return lam >= lam[..., :1] * (1 - rtol)


def principal_projector(X: torch.Tensor, rtol: float = 1e-8):
    """Projector onto the principal subspace V(X) of Definition 3.1 and the
    multiplicity r.

    Returns ``(Proj, r)``: the projector, of shape ``(..., d, d)``, and r,
    of shape ``(...)``."""
    lam, vec = spectrum(X)
    top = top_mask(lam, rtol).to(X.dtype)
    P = (vec * top.unsqueeze(-2)) @ vec.mT
    return P, top.sum(-1).to(torch.int64)


def targets(X: torch.Tensor, a: torch.Tensor, target: str) -> torch.Tensor:
    """Per-sample targets: the projector onto V(X) ``(K, d, d)`` for
    ``"subspace"`` (the loss of Theorem 4.1), ``Sa/||Sa||`` or ``Sa`` ``(K,
    d)`` for the targets (4.4)."""
    if target == "subspace":
        return principal_projector(X)[0]
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    Sa = (X @ (X.mT @ a.unsqueeze(-1)))[..., 0]
    return (
        Sa / torch.linalg.vector_norm(Sa, dim=-1, keepdim=True)
        if target == "normalized"
        else Sa
    )


def per_sample_loss(
    y: torch.Tensor, Y: torch.Tensor, target: str
) -> torch.Tensor:
    """``Dist^2(y, V(X)) = ||y||^2 - y^T Y y`` (Theorem 4.1; Y the
    projector Proj_V) or ``||y - y_target||^2`` (the losses of Theorems 4.2 and
    4.3; Y the target (4.4))."""
    if target == "subspace":
        return (y * y).sum(-1) - (y.unsqueeze(-2) @ Y @ y.unsqueeze(-1))[
            ..., 0, 0
        ]
    return ((y - Y) ** 2).sum(-1)
