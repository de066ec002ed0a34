"""The training engine: loss and gradients of the (looped) layer for R runs at once.

Shapes: ``E`` ``(R, B, 2d, n+1)``, targets ``Y`` ``(R, B, d)`` or projectors ``(R, B, d, d)``,
weights ``W, V`` ``(R, 2d, 2d)``. Losses are means over the B samples, one per run.
"""

from __future__ import annotations

import torch

from .model import looped, output


def gather(data: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``data[r, idx[r]]`` for every run r: ``(R, K, ...)`` and ``(R, B)`` -> ``(R, B, ...)``."""
    return data[torch.arange(data.shape[0], device=data.device)[:, None], idx]


def per_sample_loss(y: torch.Tensor, Y: torch.Tensor, target: str) -> torch.Tensor:
    """``Dist^2(y, V(X)) = ||y||^2 - y^T P y`` (Thm 4.1) or ``||y - y_target||^2`` (4.4)."""
    if target == "subspace":
        return (y * y).sum(-1) - (y.unsqueeze(-2) @ Y @ y.unsqueeze(-1))[..., 0, 0]
    return ((y - Y) ** 2).sum(-1)


class Model:
    """The looped layer (L = 1 for a single layer) with its training loss."""

    def __init__(self, loops: int, layer_norm: bool, target: str):
        self.loops, self.layer_norm, self.target = loops, layer_norm, target

    def predict(self, E, W, V):
        """``y_L`` for every sample: ``(R, B, d)``."""
        return output(looped(E, W.unsqueeze(1), V.unsqueeze(1), self.loops, self.layer_norm))

    def loss(self, E, Y, W, V):
        """Mean loss per run ``(R,)``."""
        return per_sample_loss(self.predict(E, W, V), Y, self.target).mean(-1)

    def loss_and_grad(self, E, Y, W, V):
        """Loss per run and its gradients with respect to W and V (each run's own mean)."""
        W = W.detach().requires_grad_(True)
        V = V.detach().requires_grad_(True)
        loss = self.loss(E, Y, W, V)
        gW, gV = torch.autograd.grad(loss.sum(), (W, V))
        return loss.detach(), gW, gV

    @torch.no_grad()
    def full_loss(self, E, Y, W, V, chunk: int = 2048):
        """Mean loss per run over a whole data set, in chunks."""
        K = E.shape[1]
        total = sum(self.loss(E[:, i:i + chunk], Y[:, i:i + chunk], W, V) * min(chunk, K - i)
                    for i in range(0, K, chunk))
        return total / K
