"""The training engine: loss and hand-written gradients of the looped layer for R runs at once.

Shapes: ``E`` ``(R, B, 2d, n+1)``; targets ``Y`` ``(R, B, d)`` or projectors ``(R, B, d, d)``;
weights ``W, V`` ``(R, 2d, 2d)``. Losses are means over the B samples, one per run, so that
summing over runs gives each run its own gradient.

Two savings over plain autograd (``lnpower.bench`` keeps that reference): the last loop is
computed for the last column only, since the output ``y_L`` reads nothing else
(``V E E^T W e = V E (E^T (W e))`` costs O(d n) instead of O(d^2 n)); and the backward pass is
written out, so the products shared by forward and backward are computed once.
"""

from __future__ import annotations

import torch


def gather(data: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``data[r, idx[r]]`` for every run r: ``(R, K, ...)`` and ``(R, B)`` -> ``(R, B, ...)``."""
    return data[torch.arange(data.shape[0], device=data.device)[:, None], idx]


def per_sample_loss(y: torch.Tensor, Y: torch.Tensor, target: str) -> torch.Tensor:
    """``Dist^2(y, V(X)) = ||y||^2 - y^T P y`` (Thm 4.1) or ``||y - y_target||^2`` (4.4)."""
    if target == "subspace":
        return (y * y).sum(-1) - (y.unsqueeze(-2) @ Y @ y.unsqueeze(-1))[..., 0, 0]
    return ((y - Y) ** 2).sum(-1)


def _loss_grad_y(y, Y, target):
    """Per-sample loss and its gradient with respect to y."""
    if target == "subspace":
        Py = (Y @ y.unsqueeze(-1))[..., 0]
        return (y * y).sum(-1) - (y * Py).sum(-1), 2 * (y - Py)
    diff = y - Y
    return (diff * diff).sum(-1), 2 * diff


def _col(v: torch.Tensor) -> torch.Tensor:
    return v.unsqueeze(-1)


def _col_norm(Z: torch.Tensor, dim: int) -> torch.Tensor:
    """Euclidean norms along ``dim`` (kept); faster than ``vector_norm`` over a strided dim."""
    return (Z * Z).sum(dim, keepdim=True).sqrt()


def _shared(F: torch.Tensor, M: torch.Tensor, R: int, add: torch.Tensor | None = None):
    """``F_b M_r`` (plus ``add``) for all samples b of run r as one GEMM per run:
    ``(R*B, N, D)`` -> the same shape."""
    RB, N, D = F.shape
    if add is None:
        return torch.bmm(F.reshape(R, -1, D), M).reshape(RB, N, -1)
    return torch.baddbmm(add.reshape(R, -1, D), F.reshape(R, -1, D), M).reshape(RB, N, -1)


def _shared_sum(P: torch.Tensor, Q: torch.Tensor, R: int) -> torch.Tensor:
    """``sum_b P_b^T Q_b`` per run as one GEMM: ``(R*B, N, D)`` x2 -> ``(R, D, D)``."""
    D = P.shape[-1]
    return torch.bmm(P.reshape(R, -1, D).mT, Q.reshape(R, -1, Q.shape[-1]))


def _rmul(W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``W_r x_{r,b}`` for every run and sample: ``(R, D, D)``, ``(R, B, D)`` -> ``(R, B, D)``."""
    return x @ W.mT


def _outer_sum(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``sum_b p_b q_b^T`` over the batch dimension: ``(R, B, D)`` x2 -> ``(R, D, D)``."""
    return p.mT @ q


class Model:
    """The looped layer (3.1) with L loops (L = 1: the single layer (4.3)/(4.5))."""

    def __init__(self, loops: int, layer_norm: bool, target: str):
        self.loops, self.layer_norm, self.target = loops, layer_norm, target

    def _forward(self, E, W, V, keep: bool):
        """Full loops 1..L-1, then the last column of loop L. Returns the output column
        ``(R, B, 2d)`` and, when ``keep``, what the backward pass needs.

        The full loops run on ``F = E^T`` (tokens as rows): ``Z^T = F + F W^T (F^T F) V^T``, so
        both products with the shared weights are single GEMMs over all R*B*(n+1) tokens."""
        R, B, D, N = E.shape
        saved = []
        if self.loops > 1:
            F = E.mT.reshape(R * B, N, D)
        for _ in range(self.loops - 1):
            A = _shared(F, W.mT, R)
            G = torch.bmm(F.mT, F)
            C = torch.bmm(A, G)
            Z = _shared(C, V.mT, R, add=F)
            r = torch.linalg.vector_norm(Z, dim=-1, keepdim=True) if self.layer_norm else None
            F_next = Z.div_(r) if self.layer_norm else Z
            if keep:
                saved.append((F, A, G, C, r, F_next))
            F = F_next
        if self.loops > 1:
            E = F.reshape(R, B, N, D).mT
        e = E[..., -1]
        u = _rmul(W, e)
        Eu = (E.mT @ _col(u))[..., 0]
        Gu = (E @ _col(Eu))[..., 0]
        z = e + _rmul(V, Gu)
        r = _col_norm(z, -1) if self.layer_norm else None
        yf = z / r if self.layer_norm else z
        return yf, (saved, E, e, u, Eu, Gu, r) if keep else None

    def predict(self, E, W, V):
        """``y_L`` for every sample: ``(R, B, d)``."""
        yf, _ = self._forward(E, W, V, keep=False)
        return yf[..., yf.shape[-1] // 2:]

    def loss(self, E, Y, W, V):
        """Mean loss per run ``(R,)``."""
        return per_sample_loss(self.predict(E, W, V), Y, self.target).mean(-1)

    def loss_and_grad(self, E, Y, W, V):
        """Loss per run and its gradients with respect to W and V (each run's own mean)."""
        yf, (saved, E_last, e, u, Eu, Gu, r) = self._forward(E, W, V, keep=True)
        d = yf.shape[-1] // 2
        loss, gy = _loss_grad_y(yf[..., d:], Y, self.target)
        B = E.shape[1]
        dyf = torch.zeros_like(yf)
        dyf[..., d:] = gy / B
        # last loop, last column: z = e + V E E^T W e
        dz = (dyf - yf * (yf * dyf).sum(-1, keepdim=True)) / r if self.layer_norm else dyf
        gV = _outer_sum(dz, Gu)
        q = _rmul(V.mT, dz)
        Eq = (E_last.mT @ _col(q))[..., 0]
        Gq = (E_last @ _col(Eq))[..., 0]
        gW = _outer_sum(Gq, e)
        if not saved:
            return loss.mean(-1), gW, gV
        R, B, D, N = E_last.shape
        dF = _col(Eu) @ q.unsqueeze(-2) + _col(Eq) @ u.unsqueeze(-2)
        dF[..., -1, :] += dz + _rmul(W.mT, Gq)
        dF = dF.reshape(R * B, N, D)
        # full loops, last to first (transposed layout, see _forward)
        for i, (F, A, G, C, r_l, F_out) in reversed(list(enumerate(saved))):
            if self.layer_norm:
                dZ = torch.addcmul(dF, F_out, (F_out * dF).sum(-1, keepdim=True), value=-1)
                dZ.div_(r_l)
            else:
                dZ = dF
            gV += _shared_sum(dZ, C, R)
            dC = _shared(dZ, V, R)
            dA = torch.bmm(dC, G)
            gW += _shared_sum(dA, F, R)
            if i == 0:  # the input E is data: no gradient needed
                break
            dG = torch.bmm(A.mT, dC)
            dF = torch.baddbmm(_shared(dA, W, R, add=dZ), F, dG + dG.mT)
        return loss.mean(-1), gW, gV

    def full_loss_and_grad(self, E, Y, W, V, chunk: int = 1024):
        """:meth:`loss_and_grad` over a whole data set, in chunks (bounded memory)."""
        K = E.shape[1]
        out = [torch.zeros_like(x) for x in (W[:, 0, 0], W, V)]
        for i in range(0, K, chunk):
            part = self.loss_and_grad(E[:, i:i + chunk], Y[:, i:i + chunk], W, V)
            for acc, x in zip(out, part):
                acc += x * (min(chunk, K - i) / K)
        return tuple(out)

    @torch.no_grad()
    def full_loss(self, E, Y, W, V, chunk: int = 1024):
        """Mean loss per run over a whole data set, in chunks."""
        K = E.shape[1]
        total = sum(self.loss(E[:, i:i + chunk], Y[:, i:i + chunk], W, V) * min(chunk, K - i)
                    for i in range(0, K, chunk))
        return total / K
