"""The book's own claims beyond Theorem 4.2 (chapter without_ln): the
no-LN fixed point is a saddle off the structured family, and SGD leaves
it."""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import cache as _cache
from .. import dynamics, stability, theory
from ..config import PAPER
from ..readings import spelled
from ..runs import (
    BIG,
    TASKS,
    ensemble,
    paper_task,
    sample,
)
from .core import over_seeds, verdict

# --- beyond Theorem 4.2: the no-LN fixed point off the structured family
# ---------------------


def fixed_point(task: str, target: str) -> tuple[float, float]:
    """(alpha~, beta~) where population gradient descent from (0, v0) stops
    (Theorem 4.2)."""
    opt = theory.no_ln_optimum(sample(task), target)
    F = dynamics.no_ln_F(opt["kappa2"], opt["gamma_star"], PAPER.d)
    _, a, b = dynamics.run(F, 0.0, PAPER.v0, PAPER.lr, 2000, [2000])
    return float(a[-1]), float(b[-1])


@cache
def hessians(samples: int = 200_000) -> dict:
    """The population Hessian blocks at the no-LN fixed point, both tasks
    and targets (``{(task, target): {direction: block}}``, see
    ``stability.hessian_blocks``; cached)."""
    flat = _cache.arrays(
        "hessians",
        [samples],
        _cache.closure("claims/part5_saddle"),
        lambda: _hessians(samples),
    )
    out = {}
    for name, x in flat.items():
        t, tg, kind, field = name.split("|")
        block = out.setdefault((t, tg), {}).setdefault(kind, {})
        block[field] = float(x) if field == "stderr" else x
    return out


def _hessians(samples: int) -> dict[str, np.ndarray]:
    out = {}
    for t in TASKS:
        points = {
            tg: fixed_point(t, tg) for tg in ("normalized", "unnormalized")
        }
        for tg, blocks in stability.hessian_blocks(
            paper_task(t), points, samples
        ).items():
            for kind, block in blocks.items():
                out.update(
                    {
                        f"{t}|{tg}|{kind}|{k}": np.asarray(v)
                        for k, v in block.items()
                    }
                )
    return out


def _saddle():
    H = hessians()
    neg = H["sphere", "normalized"]["symmetric traceless"]
    z_neg = neg["eigenvalues"][0] / neg["stderr"]
    pos = [
        H["sphere", "unnormalized"][k]
        for k in ("symmetric traceless", "antisymmetric")
    ]
    z_pos = min(h["eigenvalues"][0] / h["stderr"] for h in pos)
    rows = [
        f"{TASKS[t]}/{spelled(tg)}: "
        + ", ".join(
            f"{k[:4]} {v['eigenvalues'][0]:+.4f}"
            for k, v in H[t, tg].items()
            if k != "identity"
        )
        for t, tg in H
    ]
    return (
        round(float(neg["eigenvalues"][0]), 5),
        verdict(z_neg < -4 and z_pos > 4),
        f"z = {z_neg:.1f} and {z_pos:.1f}; smallest eigenvalues "
        + "; ".join(rows),
    )


def _departure():
    hs = ensemble("layer", norm="none", target="normalized")["sphere"]
    L1 = theory.no_ln_optimum(sample("sphere", BIG), "normalized")["loss"]
    ratio = np.array([max(h.train_loss[-1], h.test_loss[-1]) / L1 for h in hs])
    return over_seeds(
        ratio,
        ratio < 0.99,
        f"the larger of train and test loss over "
        f"L1(gamma1*) = {L1:.4f}, per seed",
    )
