"""The chapter beyond_training (Part V): Adam against SGD on the LN layer,
and which normalisation.

Which normalisation: every normalisation of ``lnpower.norms`` (and
``"none"``, the layer (4.3)) replaces the paper's LN in the single layer of
(4.5), trained by ``fit`` at the paper's settings: the config's ``norm`` is
the only change. Two rows add a learnable gain ``g`` (and, for the centred
LayerNorm, a bias ``b``), both in R^{2d}, after the normalisation: these are
weights outside the paper's model, which the engine does not train, so
:func:`train_learnable` trains them, with W and V, by autograd and
``torch.optim.SGD`` on the same batches (a study, not a hot path; cached).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch

from .. import cache as _cache
from .. import dynamics, norms
from ..cache import memo
from ..claims.status import over_seeds, verdict
from ..config import DTYPES, PAPER, TrainConfig, paper_config
from ..model import active_weights, predict, structure_residual
from ..optimisers import ADAM
from ..tasks import generator
from ..train import dataset, fit, fit_many, initial_weights, run_key, seeds
from .ensembles import ensemble
from .population import ln_run

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
        key = _cache.code_key(__name__, norm=kind, run=run_key(c))
        rows.append(
            _cache.values(
                "norms", key, lambda kind=kind: train_learnable(kind, c), cache
            )
        )
    return rows


# --- Adam against SGD


def adam_runs(lr: float = 1e-3, seeds=(0, 1, 2)):
    """The LN layer trained by Adam at the paper's other settings (cached)."""
    return fit_many(
        [
            paper_config(model="layer", optimizer="adam", lr=lr, seed=s)
            for s in seeds
        ],
        cache=True,
    )


@memo
def adam_population(lr: float = 1e-3, steps: int = 10**5):
    """Adam on the LN layer's reduced population loss, from (alpha, beta) =
    (0, 1)."""
    tab, _ = ln_run()
    return dynamics.run_adam(
        tab, 0.0, 1.0, lr, steps, [PAPER.steps, *dynamics.log_steps(steps)]
    )


def beyond_adam_follows_population():
    t, w, v = adam_population()
    i = list(t).index(PAPER.steps)
    err = np.array(
        [
            max(abs(h.w[-1] / w[i] - 1), abs(h.v[-1] / v[i] - 1))
            for h in adam_runs()
        ]
    )
    return over_seeds(
        err,
        err < 0.03,
        quantity="the largest relative difference from the population",
        detail=f"population alpha {w[i]:.3f}, beta {v[i]:.3f}",
    )


def beyond_adam_balance():
    t, w, v = adam_population()
    ratios = np.array([h.w[-1] / h.v[-1] for h in adam_runs()])
    sgd = np.median([h.w[-1] / h.v[-1] for h in ensemble("layer")["sphere"]])
    late = w[-1] / v[-1]
    return over_seeds(
        ratios,
        (ratios < 0.5) & (late < 0.9),
        quantity="Adam's alpha/beta at T = 2000",
        detail=f"SGD's (median of 5 seeds) {sgd:.3f}; population Adam at "
        f"t = 10^5: {late:.3f}",
    )


def beyond_adam_growth():
    t, w, v = adam_population()
    early = dynamics.exponent(t, w * v, 1e4, 3e4)[0]
    late = dynamics.exponent(t, w * v, 3e4, 1e5)[0]
    tab, _ = ln_run()
    grad = abs(v[-1] * tab(w[-1] * v[-1]))  # alpha's gradient at 10^5
    ok = early > 2 and late < 1.5 and grad < ADAM[2]
    return (
        round(early, 3),
        verdict(ok),
        f"exponent of gamma on [10^4, 3x10^4]: {early:.3f}; on [3x10^4, "
        "10^5]: "
        f"{late:.3f}; |gradient| at 10^5: {grad:.1e}",
    )


def _norm_rows() -> dict[tuple[str, bool], dict]:
    return {(r["norm"], r["learnable"]): r for r in compare()}


def beyond_norm_gain():
    r = _norm_rows()
    ln, rms = r[("layernorm", False)], r[("rmsnorm", False)]
    rms_g = r[("rmsnorm", True)]
    ratio = rms_g["test_loss"] / ln["test_loss"]
    ok = (
        abs(ratio - 1) < 0.05 and rms["cosine"] > 0.99 and rms["test_loss"] > 1
    )
    return (
        round(ratio, 4),
        verdict(ok),
        f"test loss of RMSNorm + gain over LN's: {ratio:.4f}; "
        f"test loss: LN {ln['test_loss']:.4f}, RMSNorm + gain "
        f"{rms_g['test_loss']:.4f}, RMSNorm "
        f"{rms['test_loss']:.2f} (cosine {rms['cosine']:.4f})",
    )


def beyond_norm_centring():
    r = _norm_rows()
    ln, bare, full = (
        r[("layernorm", False)],
        r[("centered", False)],
        r[("centered", True)],
    )
    ratio = full["test_loss"] / ln["test_loss"]
    ok = bare["cosine"] < 0.9 and bare["residual"] > 0.1 and ratio < 1.2
    return (
        round(ratio, 4),
        verdict(ok),
        f"test loss of LayerNorm with gain and bias over the paper's LN's: "
        f"{ratio:.4f} ({full['test_loss']:.4f} against "
        f"{ln['test_loss']:.4f}); LayerNorm without them: cosine "
        f"{bare['cosine']:.3f}, residual {bare['residual']:.3f}",
    )
