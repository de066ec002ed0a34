"""Max-abs normalisation (Part V): every column divided by its largest
absolute entry, so that the largest entry of each token is +-1."""

from __future__ import annotations

from torch import Tensor


def maxabs(Z: Tensor, dim: int = -2) -> Tensor:
    """``z / max_i |z_i|`` for every column z (the l-infinity norm)."""
    return Z / Z.abs().amax(dim, keepdim=True)
