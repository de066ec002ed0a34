"""Out-of-distribution test matrices (Assumption 4.4, §4.3): unit columns,
not rotation invariant, unlike the training tasks of ``lnpower.tasks``."""

from __future__ import annotations

import torch

from .tasks import _positive_int


def anisotropic(
    count: int,
    d: int,
    n: int,
    g: torch.Generator,
    scales=None,
    dtype=torch.float64,
) -> torch.Tensor:
    """Out-of-distribution test matrices (Assumption 4.4): Gaussian columns
    with covariance diag(scales)^2, normalised. Unit columns, not rotation
    invariant."""
    scales = (
        torch.linspace(3.0, 0.5, d, dtype=dtype)
        if scales is None
        else torch.as_tensor(scales, dtype=dtype)
    )
    z = torch.randn((count, d, n), generator=g, dtype=dtype, device=g.device)
    z = z * scales.to(z.device).unsqueeze(-1)
    return z / torch.linalg.vector_norm(z, dim=-2, keepdim=True)


def low_rank_noise(
    count: int,
    d: int,
    n: int,
    g: torch.Generator,
    rank: int = 2,
    noise: float = 0.3,
    dtype=torch.float64,
) -> torch.Tensor:
    """Out-of-distribution test matrices: columns in a fixed rank-``rank``
    subspace (the first coordinates) plus isotropic Gaussian noise of size
    ``noise``, normalised (Assumption 4.4)."""
    _positive_int("rank", rank)
    z = (
        torch.randn((count, d, n), generator=g, dtype=dtype, device=g.device)
        * noise
    )
    z[:, :rank] += torch.randn(
        (count, rank, n), generator=g, dtype=dtype, device=g.device
    )
    return z / torch.linalg.vector_norm(z, dim=-2, keepdim=True)
