"""Standard LayerNorm without gain and bias: the mean-centred normalisation
of transformers (Part V)."""

from __future__ import annotations

from torch import Tensor


def centered(Z: Tensor, dim: int = -2) -> Tensor:
    """Standard LayerNorm without gain and bias: ``(z - mean z) / std z``
    over the features (torch's epsilon 1e-5)."""
    C = Z - Z.mean(dim, keepdim=True)
    return C / (C.pow(2).mean(dim, keepdim=True) + 1e-5).sqrt()
