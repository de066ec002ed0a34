"""Which normalisation? The single layer of (4.5) with the paper's LN
replaced (Part V).

Every normalisation of ``lnpower.norms`` (and ``"none"``, the layer (4.3))
is trained by ``fit`` at the paper's settings: the config's ``norm`` is the
only change. Two rows add a learnable gain ``g`` (and, for the centred
LayerNorm, a bias ``b``), both in R^{2d}, after the normalisation: these are
weights outside the paper's model, which the engine does not train, so
:func:`train_learnable` trains them, with W and V, by autograd and
``torch.optim.SGD`` on the same batches (a study, not a hot path; cached).
"""

from __future__ import annotations

import dataclasses
import json

import torch

from . import cache as _cache
from . import norms
from .config import DTYPES, TrainConfig, paper_config
from .model import active_weights, predict, structure_residual
from .tasks import generator
from .train import TRAINING_MODULES, dataset, fit, initial_weights, seeds

LEARNABLE = (("rmsnorm", True), ("centered", True))


def all_variants() -> tuple[tuple[str, bool], ...]:
    """``(norm, learnable)`` for every registered normalisation, ``"none"``
    and the learnable rows: what :func:`compare` trains by default."""
    fixed = sorted(norms.NORMS, key=lambda k: k != "layernorm")
    return (*((k, False) for k in (*fixed, "none")), *LEARNABLE)


def _check(config: TrainConfig) -> TrainConfig:
    c = config or paper_config(model="layer")
    if c.model != "layer" or c.target != "normalized" or c.optimizer != "sgd":
        raise ValueError(
            "the normalisation study trains the single layer by SGD on the "
            "normalised target"
        )
    return c


def summary(c: TrainConfig, W, V, norm) -> dict:
    """Test loss, mean cosine between output and target on the test set,
    structure residual and active weights (alpha, beta) of a trained layer
    with normalisation ``norm`` (a name or a function of Z)."""
    E, Y = dataset(c, "test")
    with torch.no_grad():
        y = predict(E, W, V, 1, norm)
        alpha, beta = active_weights(W, V)
        cosine = (y * Y).sum(-1) / (y.norm(dim=-1) * Y.norm(dim=-1))
        return {
            "test_loss": ((y - Y) ** 2).sum(-1).mean().item(),
            "cosine": cosine.mean().item(),
            "residual": structure_residual(W, V).item(),
            "alpha": alpha.item(),
            "beta": beta.item(),
        }


def train_fixed(kind: str, config: TrainConfig | None = None, cache=None):
    """The layer with normalisation ``kind`` trained by ``fit``."""
    c = dataclasses.replace(_check(config), norm=kind)
    h = fit(c, progress=False, cache=cache)
    return {"norm": kind, "learnable": False, **summary(c, h.W, h.V, kind)}


def train_learnable(kind: str, config: TrainConfig | None = None) -> dict:
    """The layer with normalisation ``kind`` followed by a learnable gain
    (and a bias for ``"centered"``), trained with W and V by SGD on the
    batches ``fit`` draws."""
    c = _check(config)
    dtype = DTYPES[c.dtype]
    E, Y = dataset(c, "train")
    W, V = (x.to(E.device, dtype).requires_grad_() for x in initial_weights(c))
    D = W.shape[0]
    gain = torch.ones(D, dtype=dtype, requires_grad=True)
    bias = torch.zeros(D, dtype=dtype, requires_grad=kind == "centered")
    opt = torch.optim.SGD([W, V, gain, bias], lr=c.lr)
    base = norms.get(kind)

    def norm(Z):
        return base(Z) * gain[:, None] + bias[:, None]

    g = generator(seeds(c.seed)["batches"])
    for t in range(c.steps):
        idx = torch.randint(c.train_size, (c.batch,), generator=g)
        opt.zero_grad()
        loss = ((predict(E[idx], W, V, 1, norm) - Y[idx]) ** 2).sum(-1).mean()
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{kind}: training diverged at step {t}")
        loss.backward()
        opt.step()
    return {"norm": kind, "learnable": True, **summary(c, W, V, norm)}


def compare(variants=None, config=None, cache=True) -> list[dict]:
    """One row per ``(norm, learnable)`` (default :func:`all_variants`): fixed
    normalisations through ``fit`` (its cache), learnable ones through
    :func:`train_learnable` (cached here)."""
    c = _check(config)
    rows = []
    for kind, learnable in variants or all_variants():
        if not learnable:
            rows.append(train_fixed(kind, c, cache))
            continue
        rows.append(
            _cache.cached(
                "norms",
                [dataclasses.asdict(c), kind],
                (*TRAINING_MODULES, "variants", f"norms/{kind}"),
                lambda kind=kind: train_learnable(kind, c),
                lambda out, folder: (folder / "row.json").write_text(
                    json.dumps(out)
                ),
                lambda folder: json.loads((folder / "row.json").read_text()),
                cache,
            )
        )
    return rows
