"""Which normalisation? The single layer of (4.5) with the paper's LN replaced (Part V).

The output column ``z = e + V E E^T W e`` of the layer is normalised by one of

- ``"column"``: the paper's LN, ``z/||z||`` (column-wise l2, Eq. 3.1);
- ``"rms"``: RMSNorm, ``sqrt(2d) z/||z||`` (root mean square over the 2d features);
- ``"layernorm"``: standard LayerNorm, ``(z - mean z)/std z`` over the 2d features;
- ``"none"``: no normalisation (the layer (4.3));

optionally followed by a learnable gain ``g`` (and, for LayerNorm, a bias ``b``), both in
R^{2d}. Training is plain autograd and ``torch.optim.SGD`` at the paper's settings (this is a
study, not a hot path); results are cached like trained runs.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import torch

from .model import active_weights, structure_residual
from .tasks import generator
from .train import (
    DTYPES,
    TrainConfig,
    _cache_key,
    cache_dir,
    dataset,
    initial_weights,
    paper_config,
    seeds,
)

NORMS = ("column", "rms", "layernorm", "none")


def normalise(z: torch.Tensor, kind: str, gain=None, bias=None) -> torch.Tensor:
    """Normalise the last dimension of ``z`` (2d features) by ``kind``, then ``* gain + bias``."""
    if kind == "column":
        y = z / z.norm(dim=-1, keepdim=True)
    elif kind == "rms":
        y = math.sqrt(z.shape[-1]) * z / z.norm(dim=-1, keepdim=True)
    elif kind == "layernorm":
        c = z - z.mean(-1, keepdim=True)
        y = c / (c.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt()  # torch's LayerNorm epsilon
    elif kind == "none":
        y = z
    else:
        raise ValueError(f"normalisation must be one of {NORMS}, got {kind!r}")
    if gain is not None:
        y = y * gain
    return y if bias is None else y + bias


def train_layer(kind: str, learnable: bool, config: TrainConfig | None = None) -> dict:
    """Train the layer with normalisation ``kind`` (and a learnable gain, plus a bias for
    LayerNorm, when ``learnable``) by SGD on the normalised target. Returns the final test loss,
    the mean cosine between output and target on the test set, the structure residual and the
    active weights alpha, beta."""
    c = config or paper_config(model="layer")
    if c.model != "layer" or c.target != "normalized" or c.optimizer != "sgd":
        raise ValueError("the normalisation study trains the single layer by SGD on the "
                         "normalised target")
    dtype = DTYPES[c.dtype]
    (E, Y), (Et, Yt) = dataset(c, "train"), dataset(c, "test")
    W, V = (x.to(E.device, dtype).requires_grad_(True) for x in initial_weights(c))
    D, d = W.shape[0], W.shape[0] // 2
    gain = torch.ones(D, dtype=dtype, requires_grad=True) if learnable else None
    bias = torch.zeros(D, dtype=dtype, requires_grad=True) if learnable and \
        kind == "layernorm" else None
    opt = torch.optim.SGD([p for p in (W, V, gain, bias) if p is not None], lr=c.lr)

    def output(E):
        e = E[..., -1]
        z = e + (E @ (E.mT @ (e @ W.mT).unsqueeze(-1))).squeeze(-1) @ V.mT
        return normalise(z, kind, gain, bias)[..., d:]

    g = generator(seeds(c.seed)[2])
    for t in range(c.steps):
        idx = torch.randint(c.train_size, (c.batch,), generator=g)
        opt.zero_grad()
        loss = ((output(E[idx]) - Y[idx]) ** 2).sum(-1).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{kind}: training diverged at step {t}")
        loss.backward()
        opt.step()
    with torch.no_grad():
        y = output(Et)
        alpha, beta = active_weights(W, V)
        return {"norm": kind, "learnable": learnable,
                "test_loss": ((y - Yt) ** 2).sum(-1).mean().item(),
                "cosine": ((y * Yt).sum(-1) / (y.norm(dim=-1) * Yt.norm(dim=-1))).mean().item(),
                "residual": structure_residual(W, V).item(),
                "alpha": alpha.item(), "beta": beta.item()}


def compare(variants=(("column", False), ("rms", False), ("rms", True), ("layernorm", False),
                      ("layernorm", True), ("none", False)),
            config: TrainConfig | None = None, cache=True) -> list[dict]:
    """:func:`train_layer` for each ``(kind, learnable)``; cached (see ``train.cache_dir``)."""
    c = config or paper_config(model="layer")
    where = cache_dir(cache)
    h = hashlib.sha256(_cache_key([c]).encode())
    h.update(Path(__file__).read_bytes())
    h.update(json.dumps(list(variants)).encode())
    path = None if where is None else where / f"norms-{h.hexdigest()[:20]}.json"
    if path is not None and path.exists():
        return json.loads(path.read_text())
    out = [train_layer(kind, learnable, c) for kind, learnable in variants]
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out))
    return out
