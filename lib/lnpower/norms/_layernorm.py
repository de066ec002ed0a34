"""The paper's LN (§3.2), with its hand-written backward (the engine's hot
path)."""

from __future__ import annotations

import torch
from torch import Tensor


def _length(Z: Tensor, dim: int) -> Tensor:
    """Euclidean norms along ``dim`` (kept)."""
    return (Z * Z).sum(dim, keepdim=True).sqrt()


def layernorm(Z: Tensor, dim: int = -2) -> Tensor:
    """The paper's LN: every column (token) scaled to unit Euclidean norm,
    ``LN(Z)_{:,j} = Z_{:,j} / ||Z_{:,j}||``. No centring and no gain: the
    book's reading of §3.2, the only one under which the display of E^(1)
    in §4.1 holds (the unit columns of X pass through unchanged)."""
    return Z / _length(Z, dim)


def layernorm_pair(Z: Tensor, dim: int):
    """LN in place, and its backward ``(G - Y (Y . G)) / ||Z||``."""
    r = _length(Z, dim)
    Y = Z.div_(r)

    def backward(G: Tensor, out: Tensor | None = None) -> Tensor:
        s = torch.mul(Y, G, out=out).sum(dim, keepdim=True)
        return torch.addcmul(G, Y, s, value=-1, out=out).div_(r)

    return Y, backward
