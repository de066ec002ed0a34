"""RMSNorm without its gain (Part V)."""

from __future__ import annotations

import math

from torch import Tensor

from ._layernorm import layernorm


def rmsnorm(Z: Tensor, dim: int = -2) -> Tensor:
    """RMSNorm without gain: ``z / rms(z) = sqrt(D) z / ||z||`` over the D
    = 2d features."""
    return math.sqrt(Z.shape[dim]) * layernorm(Z, dim)
