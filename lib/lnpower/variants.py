"""Which normalisation? The single layer of (4.5) with the paper's LN
replaced (Part V).

The layer is the model's own (``lnpower.model.predict``) with its ``norm``
hook set to a column normalisation:

- ``"column"``: the paper's LN, ``z/||z||`` for every column z;
- ``"rms"``: RMSNorm, ``sqrt(2d) z/||z||`` (root mean square over the 2d
  features);
- ``"layernorm"``: standard LayerNorm, ``(z - mean z)/std z`` over the 2d
  features;
- ``"none"``: no normalisation (the layer (4.3));

optionally followed by a learnable gain ``g`` (and, for LayerNorm, a bias
``b``), both in R^{2d}. Training is plain autograd and ``torch.optim.SGD``
at the paper's settings (a study, not a hot path); results are cached like
trained runs.
"""

from __future__ import annotations

import dataclasses
import json
import math

import torch

from . import cache as _cache
from .config import DTYPES, TrainConfig, paper_config
from .model import active_weights, predict, structure_residual
from .tasks import generator
from .train import TRAINING_MODULES, dataset, initial_weights, seeds

NORMS = ("column", "rms", "layernorm", "none")


def normaliser(kind: str, gain=None, bias=None):
    """The column normalisation ``kind`` followed by ``* gain + bias`` (each
    ``(2d,)`` or None), as a function of ``Z`` ``(..., 2d, N)`` for the
    ``norm`` hook of ``lnpower.model.layer``; None for ``"none"`` without
    gain."""
    if kind not in NORMS:
        raise ValueError(f"normalisation must be one of {NORMS}, got {kind!r}")
    if kind == "none" and gain is None and bias is None:
        return None

    def norm(Z):
        if kind == "column":
            Z = Z / Z.norm(dim=-2, keepdim=True)
        elif kind == "rms":
            Z = math.sqrt(Z.shape[-2]) * Z / Z.norm(dim=-2, keepdim=True)
        elif kind == "layernorm":
            C = Z - Z.mean(-2, keepdim=True)
            Z = (
                C / (C.pow(2).mean(-2, keepdim=True) + 1e-5).sqrt()
            )  # torch's LayerNorm eps
        if gain is not None:
            Z = Z * gain[:, None]
        return Z if bias is None else Z + bias[:, None]

    return norm


def train_layer(
    kind: str, learnable: bool, config: TrainConfig | None = None
) -> dict:
    """Train the layer with normalisation ``kind`` (and a learnable gain,
    plus a bias for LayerNorm, when ``learnable``) by SGD on the normalised
    target. Returns the final test loss, the mean cosine between output and
    target on the test set, the structure residual and the active weights
    alpha, beta."""
    c = config or paper_config(model="layer")
    if c.model != "layer" or c.target != "normalized" or c.optimizer != "sgd":
        raise ValueError(
            "the normalisation study trains the single layer by SGD on the "
            "normalised target"
        )
    dtype = DTYPES[c.dtype]
    (E, Y), (Et, Yt) = dataset(c, "train"), dataset(c, "test")
    W, V = (
        x.to(E.device, dtype).requires_grad_(True) for x in initial_weights(c)
    )
    D = W.shape[0]
    gain = (
        torch.ones(D, dtype=dtype, requires_grad=True) if learnable else None
    )
    bias = (
        torch.zeros(D, dtype=dtype, requires_grad=True)
        if learnable and kind == "layernorm"
        else None
    )
    opt = torch.optim.SGD(
        [p for p in (W, V, gain, bias) if p is not None], lr=c.lr
    )
    norm = normaliser(kind, gain, bias)
    g = generator(seeds(c.seed)["batches"])
    for t in range(c.steps):
        idx = torch.randint(c.train_size, (c.batch,), generator=g)
        opt.zero_grad()
        loss = ((predict(E[idx], W, V, 1, norm) - Y[idx]) ** 2).sum(-1).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{kind}: training diverged at step {t}")
        loss.backward()
        opt.step()
    with torch.no_grad():
        y = predict(Et, W, V, 1, norm)
        alpha, beta = active_weights(W, V)
        return {
            "norm": kind,
            "learnable": learnable,
            "test_loss": ((y - Yt) ** 2).sum(-1).mean().item(),
            "cosine": ((y * Yt).sum(-1) / (y.norm(dim=-1) * Yt.norm(dim=-1)))
            .mean()
            .item(),
            "residual": structure_residual(W, V).item(),
            "alpha": alpha.item(),
            "beta": beta.item(),
        }


def compare(
    variants=(
        ("column", False),
        ("rms", False),
        ("rms", True),
        ("layernorm", False),
        ("layernorm", True),
        ("none", False),
    ),
    config: TrainConfig | None = None,
    cache=True,
) -> list[dict]:
    """:func:`train_layer` for each ``(kind, learnable)``; cached (see
    ``lnpower.cache``)."""
    c = config or paper_config(model="layer")
    return _cache.cached(
        "norms",
        [dataclasses.asdict(c), list(variants)],
        (*TRAINING_MODULES, "variants"),
        lambda: [
            train_layer(kind, learnable, c) for kind, learnable in variants
        ],
        lambda out, folder: (folder / "results.json").write_text(
            json.dumps(out)
        ),
        lambda folder: json.loads((folder / "results.json").read_text()),
        cache,
    )
