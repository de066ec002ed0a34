"""The book's own claims about the optimiser and the normalisation (Part V,
chapter beyond_training): Adam against SGD, and which normalisation."""

from __future__ import annotations

import numpy as np

from .. import dynamics, variants
from ..config import ADAM
from ..runs import (
    adam_population,
    adam_runs,
    ensemble,
    ln_run,
)
from .core import over_seeds, verdict


def _adam_follows():
    t, w, v = adam_population()
    i = list(t).index(2000)
    err = np.array(
        [
            max(abs(h.w[-1] / w[i] - 1), abs(h.v[-1] / v[i] - 1))
            for h in adam_runs()
        ]
    )
    return over_seeds(
        err,
        err < 0.03,
        f"largest relative difference per seed (population "
        f"alpha {w[i]:.3f}, beta {v[i]:.3f})",
    )


def _adam_balance():
    t, w, v = adam_population()
    ratios = np.array([h.w[-1] / h.v[-1] for h in adam_runs()])
    sgd = np.median([h.w[-1] / h.v[-1] for h in ensemble("layer")["sphere"]])
    late = w[-1] / v[-1]
    return over_seeds(
        ratios,
        (ratios < 0.5) & (late < 0.9),
        f"Adam's alpha/beta at T = 2000 per seed; SGD's (median of 5 seeds) "
        f"{sgd:.3f}; population Adam at t = 10^5: {late:.3f}",
    )


def _adam_growth():
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


def _norms() -> dict[tuple[str, bool], dict]:
    return {(r["norm"], r["learnable"]): r for r in variants.compare()}


def _norm_gain():
    r = _norms()
    ln, rms = r[("layernorm", False)], r[("rmsnorm", False)]
    rms_g = r[("rmsnorm", True)]
    ratio = rms_g["test_loss"] / ln["test_loss"]
    ok = (
        abs(ratio - 1) < 0.05 and rms["cosine"] > 0.99 and rms["test_loss"] > 1
    )
    return (
        round(ratio, 4),
        verdict(ok),
        f"test loss: LN {ln['test_loss']:.4f}, RMSNorm + gain "
        f"{rms_g['test_loss']:.4f}, RMSNorm "
        f"{rms['test_loss']:.2f} (cosine {rms['cosine']:.4f})",
    )


def _norm_centring():
    r = _norms()
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
        f"LayerNorm: cosine {bare['cosine']:.3f}, residual "
        f"{bare['residual']:.3f}; with gain "
        f"and bias: test loss {full['test_loss']:.4f} against LN "
        f"{ln['test_loss']:.4f}",
    )
