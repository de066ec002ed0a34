"""The linear self-attention layer with and without layer normalisation (§3.2):
the one definition of the model's forward pass. The training engine
(``lnpower.engine``) is a faster implementation of the same function, tested
against this one.

Shapes: ``E`` is ``(..., 2d, n+1)``; ``W`` and ``V`` are ``(2d, 2d)``, or
batched like ``E`` (``(G, 1, 2d, 2d)`` against ``(G, B, 2d, n+1)`` for G
independent runs)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from .norms import resolve

NormSpec = Callable[[torch.Tensor], torch.Tensor] | str | None


def attention(
    E: torch.Tensor, W: torch.Tensor, V: torch.Tensor
) -> torch.Tensor:
    """The linear attention update ``V E E^T W E`` (no softmax, no 1/n)."""
    return V @ (E @ E.mT) @ W @ E


def layer(
    E: torch.Tensor,
    W: torch.Tensor,
    V: torch.Tensor,
    norm: NormSpec = "layernorm",
) -> torch.Tensor:
    """One layer: ``TF(E) = LN(E + V E E^T W E)`` (4.5); with ``norm=None``
    (or ``"none"``) the layer ``E + V E E^T W E`` (4.3) without LN. Any
    other column normalisation can be passed as ``norm``, by its name in
    ``lnpower.norms`` or as a function of Z (Part V compares several)."""
    Z = E + attention(E, W, V)
    norm = resolve(norm)
    return Z if norm is None else norm(Z)


def looped(
    E: torch.Tensor,
    W: torch.Tensor,
    V: torch.Tensor,
    L: int,
    norm: NormSpec = "layernorm",
    return_all: bool = False,
):
    """The looped model (3.1): ``E^(l) = TF(E^(l-1))`` for l = 1..L with
    shared (W, V).

    Returns ``E^(L)``, or the list ``[E^(1), ..., E^(L)]`` when
    ``return_all``."""
    if isinstance(L, bool) or not isinstance(L, int) or L < 1:
        raise ValueError(f"L must be a positive integer, got {L!r}")
    states = []
    for _ in range(L):
        E = layer(E, W, V, norm)
        states.append(E)
    return states if return_all else E


def output(E: torch.Tensor) -> torch.Tensor:
    """The prediction ``y = [E]_{d+1:2d, n+1}``: bottom half of the last
    column, ``(..., d)``."""
    return E[..., E.shape[-2] // 2 :, -1]


def predict(
    E: torch.Tensor,
    W: torch.Tensor,
    V: torch.Tensor,
    L: int = 1,
    norm: NormSpec = "layernorm",
) -> torch.Tensor:
    """The prediction ``y_L(E; theta)`` of the looped model (3.1); L = 1 is
    the single layer: ``(..., d)``. The same as ``output(looped(...))``, but
    the last loop computes only the last column, the only one the output
    reads: every normalisation acts column by column, and
    ``(V E E^T W E)_{:, n+1} = V E (E^T (W e))`` with e the last column."""
    if L > 1:
        E = looped(E, W, V, L - 1, norm)
    e = E[..., -1:]
    z = e + V @ (E @ (E.mT @ (W @ e)))
    norm = resolve(norm)
    return output(z if norm is None else norm(z))


def structured(d: int, w: float = 0.0, v: float = 1.0, dtype=torch.float64):
    """Structured weights (4.2): ``W12 = w I``, ``V21 = v I``, all other
    blocks zero.

    ``structured(d, 0, v0)`` is the initialisation of Theorems 4.1-4.3 (``W
    = 0``, ``V21 = v0 I``)."""
    W = torch.zeros(2 * d, 2 * d, dtype=dtype)
    V = torch.zeros(2 * d, 2 * d, dtype=dtype)
    W[:d, d:] = w * torch.eye(d, dtype=dtype)
    V[d:, :d] = v * torch.eye(d, dtype=dtype)
    return W, V


#: the names of the four d x d blocks of W and V
BLOCKS = ("11", "12", "21", "22")


def blocks(M: torch.Tensor) -> dict[str, torch.Tensor]:
    """The four d x d blocks ``{"11", "12", "21", "22"}`` (:data:`BLOCKS`)
    of a ``(..., 2d, 2d)`` matrix."""
    d = M.shape[-1] // 2
    top, bottom = slice(None, d), slice(d, None)
    quarters = (
        M[..., top, top],
        M[..., top, bottom],
        M[..., bottom, top],
        M[..., bottom, bottom],
    )
    return dict(zip(BLOCKS, quarters))


def active_weights(W: torch.Tensor, V: torch.Tensor):
    """The active weights: mean diagonals of ``W12`` and ``V21`` (w, v or
    alpha, beta)."""
    w = torch.diagonal(blocks(W)["12"], dim1=-2, dim2=-1).mean(-1)
    v = torch.diagonal(blocks(V)["21"], dim1=-2, dim2=-1).mean(-1)
    return w, v


def structure_residual(W: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Largest entry of (W, V) outside the structure (4.2), relative to the
    largest active entry: 0 exactly when ``W12 = w I``, ``V21 = v I`` and
    every other block vanishes."""
    d = W.shape[-1] // 2
    w, v = active_weights(W, V)
    W0, V0 = W.clone(), V.clone()
    eye = torch.eye(d, dtype=W.dtype, device=W.device)
    W0[..., :d, d:] -= w[..., None, None] * eye
    V0[..., d:, :d] -= v[..., None, None] * eye
    off = torch.maximum(W0.abs().amax((-2, -1)), V0.abs().amax((-2, -1)))
    return off / torch.maximum(w.abs(), v.abs()).clamp_min(
        torch.finfo(W.dtype).tiny
    )
