"""The training engine: loss and hand-written gradients of the looped layer
for G runs at once. Shapes: ``E`` ``(G, B, 2d, n+1)``; targets ``Y`` ``(G,
B, d)`` or projectors ``(G, B, d, d)``; ``W, V`` ``(G, 2d, 2d)``. Losses are
means over the B samples, one per run, so that summing over runs gives each
run its own gradient.

It computes ``lnpower.model.predict`` (tested against it and autograd). Two
savings over autograd: the last loop is computed for the last column only,
which is all ``y_L`` reads (O(d n) instead of O(d^2 n)); and the backward
pass is written out, so products shared with the forward are computed once.
The normalisation is a forward and backward pair from ``lnpower.norms``.

Why not autograd: the rule (``lnbook.bench.select``, in ``python -m lnbook
bench``) keeps an autograd engine only at 85 % of this engine's steps/s on
both models over a paper-length run, compilation included. Measured
2026-12-02 (2 cores, 4 runs): ``torch.func`` 0.33-0.37; ``torch.compile``
0.83-0.87 per step once compiled, but it compiles for 19 s (looped) and
2.4-3.1 s (layer) with an empty compiler cache (as in Colab), 3.1-3.6 s
warm, at every new shape: 0.24-0.29 over a paper-length run (0.75-0.77
warm).
"""

from __future__ import annotations

import torch

from . import norms
from .tasks import per_sample_loss


def _loss_grad_y(y, Y, target):
    """Per-sample loss and its gradient with respect to y."""
    if target == "subspace":
        Py = (Y @ y.unsqueeze(-1))[..., 0]
        return (y * y).sum(-1) - (y * Py).sum(-1), 2 * (y - Py)
    diff = y - Y
    return (diff * diff).sum(-1), 2 * diff


def _col(v: torch.Tensor) -> torch.Tensor:
    return v.unsqueeze(-1)


def _shared(
    F: torch.Tensor,
    M: torch.Tensor,
    R: int,
    out: torch.Tensor,
    accumulate: bool = False,
) -> torch.Tensor:
    """``out`` = (or, ``accumulate``, +=) ``F_b M_r`` for all samples b of
    run r, one GEMM per run: ``(R*B, N, D)`` -> ``(R*B, N, D')``."""
    D = F.shape[-1]
    o, F = out.view(R, -1, out.shape[-1]), F.reshape(R, -1, D)
    if R == 1:  # a plain GEMM is about 10 % faster than a batch of one
        o, F, M = o[0], F[0], M[0]
    if accumulate:
        o.addmm_(F, M) if R == 1 else o.baddbmm_(F, M)
    else:
        torch.mm(F, M, out=o) if R == 1 else torch.bmm(F, M, out=o)
    return out


def _shared_sum(
    P: torch.Tensor, Q: torch.Tensor, R: int, out: torch.Tensor
) -> torch.Tensor:
    """``out += sum_b P_b^T Q_b`` per run as one GEMM: ``(R*B, N, D)`` x2 ->
    ``(R, D, D)``."""
    P, Q = P.reshape(R, -1, P.shape[-1]).mT, Q.reshape(R, -1, Q.shape[-1])
    if R == 1:
        out[0].addmm_(P[0], Q[0])
    else:
        out.baddbmm_(P, Q)
    return out


def _rmul(W: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``W_r x_{r,b}`` for every run and sample: ``(R, D, D)``, ``(R, B,
    D)`` -> ``(R, B, D)``."""
    return x @ W.mT


def _outer_sum(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``sum_b p_b q_b^T`` over the batch dimension: ``(R, B, D)`` x2 ->
    ``(R, D, D)``."""
    return p.mT @ q


class Model:
    """The looped layer (3.1) with L loops (L = 1: the layer (4.3)/(4.5)).

    It keeps the buffers of its last few input shapes for the next call
    (fresh tensors this size cost page faults: a fifth of a step), so one
    instance must not serve two threads at once. Returned tensors never
    alias the buffers."""

    def __init__(self, loops: int, norm: str, target: str):
        self.loops, self.target = loops, target
        self.norm = norms.get(norm)  # None: no normalisation
        self._buffers: dict[tuple, dict[str, torch.Tensor]] = {}

    def _workspace(
        self, E: torch.Tensor, keep: bool
    ) -> dict[str, torch.Tensor]:
        """Buffers for input ``E``: per full loop when ``keep`` (the
        backward pass reads them), else two alternating slots."""
        R, B, D, N = E.shape
        key = (tuple(E.shape), E.dtype, E.device, keep)
        if key not in self._buffers:
            if len(self._buffers) >= 4:
                self._buffers.pop(next(iter(self._buffers)))
            slots = self.loops if keep else 2
            new = lambda *shape: torch.empty(
                shape, dtype=E.dtype, device=E.device
            )
            self._buffers[key] = {
                "F": new(slots, R * B, N, D),
                "A": new(slots, R * B, N, D),
                "C": new(slots, R * B, N, D),
                "G": new(slots, R * B, D, D),
                # backward: two dF/dZ slots, dC, dA, dG and dG + dG^T
                "dF": new(2, R * B, N, D),
                "dC": new(R * B, N, D),
                "dA": new(R * B, N, D),
                "dG": new(2, R * B, D, D),
            }
        return self._buffers[key]

    def _forward(self, E, W, V, keep: bool):
        """Full loops 1..L-1, then the last column of loop L. Returns the
        output column ``(R, B, 2d)`` and, when ``keep``, what the backward
        pass needs.

        The full loops run on ``F = E^T`` (tokens as rows): ``Z^T = F + F
        W^T (F^T F) V^T``, so both products with the shared weights are
        single GEMMs over all R*B*(n+1) tokens."""
        R, B, D, N = E.shape
        L = self.loops
        saved = []
        if L > 1:
            ws = self._workspace(E, keep)
            F = ws["F"][0]
            F.view(R, B, N, D).copy_(E.mT)
        for i in range(L - 1):
            s, nxt = (i, i + 1) if keep else (0, (i + 1) % 2)
            A, G, C, F_next = ws["A"][s], ws["G"][s], ws["C"][s], ws["F"][nxt]
            _shared(F, W.mT, R, out=A)
            torch.bmm(F.mT, F, out=G)
            torch.bmm(A, G, out=C)
            F_next.copy_(F)
            _shared(C, V.mT, R, out=F_next, accumulate=True)
            back = None
            if self.norm is not None:
                Y, back = self.norm.forward(F_next, -1)
                if Y is not F_next:
                    F_next.copy_(Y)
            if keep:
                saved.append((F, A, G, C, back))
            F = F_next
        if L > 1:
            E = F.view(R, B, N, D).mT
        e = E[..., -1]
        u = _rmul(W, e)
        Eu = (E.mT @ _col(u))[..., 0]
        Gu = (E @ _col(Eu))[..., 0]
        z = e + _rmul(V, Gu)
        yf, back = (z, None) if self.norm is None else self.norm.forward(z, -1)
        return yf, (saved, E, e, u, Eu, Gu, back) if keep else None

    def predict(self, E, W, V):
        """``y_L`` for every sample: ``(R, B, d)``."""
        yf, _ = self._forward(E, W, V, keep=False)
        return yf[..., yf.shape[-1] // 2 :]

    def loss(self, E, Y, W, V):
        """Mean loss per run ``(R,)``."""
        return per_sample_loss(self.predict(E, W, V), Y, self.target).mean(-1)

    def loss_and_grad(self, E, Y, W, V):
        """Loss per run and its gradients with respect to W and V (each
        run's own mean)."""
        yf, (saved, E_last, e, u, Eu, Gu, back) = self._forward(
            E, W, V, keep=True
        )
        d = yf.shape[-1] // 2
        loss, gy = _loss_grad_y(yf[..., d:], Y, self.target)
        B = E.shape[1]
        dyf = torch.zeros_like(yf)
        dyf[..., d:] = gy / B
        # last loop, last column: z = e + V E E^T W e
        dz = dyf if back is None else back(dyf)
        gV = _outer_sum(dz, Gu)
        q = _rmul(V.mT, dz)
        Eq = (E_last.mT @ _col(q))[..., 0]
        Gq = (E_last @ _col(Eq))[..., 0]
        gW = _outer_sum(Gq, e)
        if not saved:
            return loss.mean(-1), gW, gV
        R, B, D, N = E_last.shape
        ws = self._workspace(E, True)
        dF, dZ_other = ws["dF"][0], ws["dF"][1]
        dF4 = dF.view(R, B, N, D)
        torch.mul(Eu[..., :, None], q[..., None, :], out=dF4)
        dF4.addcmul_(Eq[..., :, None], u[..., None, :])
        dF4[..., -1, :] += dz + _rmul(W.mT, Gq)
        dC, dA, dG, dGs = ws["dC"], ws["dA"], ws["dG"][0], ws["dG"][1]
        # full loops, last to first (transposed layout, see _forward)
        for i, (F, A, G, C, back) in reversed(list(enumerate(saved))):
            if back is None:
                dZ = dF
            else:
                dZ = back(dF, out=dZ_other)
                dZ_other = dF
            _shared_sum(dZ, C, R, out=gV)
            _shared(dZ, V, R, out=dC)
            torch.bmm(dC, G, out=dA)
            _shared_sum(dA, F, R, out=gW)
            if i == 0:  # the input E is data: no gradient needed
                break
            torch.bmm(A.mT, dC, out=dG)
            torch.add(dG, dG.mT, out=dGs)
            # dF of the loop's input, built in dZ's buffer (dZ is no longer
            # needed)
            _shared(dA, W, R, out=dZ, accumulate=True)
            dF = dZ.baddbmm_(F, dGs)
        return loss.mean(-1), gW, gV

    def full_loss_and_grad(self, E, Y, W, V, chunk: int = 1024):
        """:meth:`loss_and_grad` over a whole data set, in chunks (bounded
        memory)."""
        K = E.shape[1]
        out = [torch.zeros_like(x) for x in (W[:, 0, 0], W, V)]
        for i in range(0, K, chunk):
            part = self.loss_and_grad(
                E[:, i : i + chunk], Y[:, i : i + chunk], W, V
            )
            for acc, x in zip(out, part):
                acc += x * (min(chunk, K - i) / K)
        return tuple(out)

    @torch.no_grad()
    def full_loss(self, E, Y, W, V, chunk: int = 1024):
        """Mean loss per run over a whole data set, in chunks."""
        K = E.shape[1]
        total = sum(
            self.loss(E[:, i : i + chunk], Y[:, i : i + chunk], W, V)
            * min(chunk, K - i)
            for i in range(0, K, chunk)
        )
        return total / K
