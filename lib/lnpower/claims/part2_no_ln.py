"""Claims of Part II about the layer without LN (Theorem 4.2, Appendix B,
Figs. 6-7)."""

from __future__ import annotations

import numpy as np

from .. import dynamics, stored, theory
from ..config import PAPER
from ..readings import (
    TARGETS,
    fixed_point,
    gamma_star,
    spelled,
    test_loss_stderr,
)
from ..runs import ETA, TASKS, ensemble, sample
from .core import over_seeds, within

D = PAPER.d


# --- Theorem 4.2: without LN
# ------------------------------------------------------------------


def _no_ln(target):
    return ensemble("layer", norm="none", target=target)


def _no_ln_gamma():
    devs = np.max(
        [
            [abs(h.product[500] / gamma_star(task, target) - 1) for h in hs]
            for target in TARGETS
            for task, hs in _no_ln(target).items()
        ],
        axis=0,
    )
    return over_seeds(devs, devs < 0.02, "worst of the four runs per seed")


def _figs67():
    ok, rows = [], []
    for target in TARGETS:
        for t, hs in _no_ln(target).items():
            fine = np.array([fixed_point(h, t, target)[0] for h in hs])
            ok.append(fine)
            rows.append(
                f"{TASKS[t]}/{spelled(target)}: holds for "
                f"{int(fine.sum())} of {len(hs)} "
                f"(seed 0: {fixed_point(hs[0], t, target)[1]})"
            )
    ok = np.all(ok, axis=0)
    return over_seeds(
        ok.astype(float),
        ok,
        "the value is 1 where all four runs hold; " + "; ".join(rows),
    )


def _figs67_epochs():
    rows, ok = [], True
    for target in TARGETS:
        for t, (h,) in stored.load(f"no-ln-{target}").items():
            fine, text = fixed_point(h, t, target)
            ok &= fine
            rows.append(
                f"{TASKS[t]}/{spelled(target)}: "
                f"{'holds' if fine else 'fails'} ({text})"
            )
    return over_seeds([float(ok)], [ok], "; ".join(rows))


def _no_ln_floor():
    devs, ok, rows = [], [], []
    for task, hs in _no_ln("unnormalized").items():
        L = theory.no_ln_optimum(sample(task), "unnormalized")["loss"]
        tol = np.array([max(0.02 * L, 3 * test_loss_stderr(h)) for h in hs])
        test = np.array([h.test_loss[-1] / L - 1 for h in hs])
        train = np.array([h.train_loss[-1] / L - 1 for h in hs])
        devs.append(np.maximum(abs(test), abs(train)))
        ok.append(devs[-1] <= tol / L)
        rows.append(
            f"{TASKS[task]}: tolerance {100 * tol.min() / L:.1f}-"
            f"{100 * tol.max() / L:.1f} %, train - L* "
            f"{100 * np.median(train):+.1f} "
            f"%, test - L* {100 * test.min():+.1f} to {100 * test.max():+.1f} "
            "%"
        )
    return over_seeds(
        np.max(devs, axis=0),
        np.all(ok, axis=0),
        "worst relative distance per seed; " + "; ".join(rows),
    )


def _no_ln_rate():
    opt = theory.no_ln_optimum(sample("sphere"), "unnormalized")
    F = dynamics.no_ln_F(opt["kappa2"], opt["gamma_star"], D)
    t, w, v = dynamics.run(F, 0.0, PAPER.v0, ETA, 300)
    err = np.abs(w * v - opt["gamma_star"])
    keep = (t > 100) & (err > 1e-13)
    fitted = np.exp(np.polyfit(t[keep], np.log(err[keep]), 1)[0])
    S = w[-1] ** 2 + v[-1] ** 2
    predicted = 1 - ETA * S * 2 * opt["kappa2"] / D
    return (
        round(fitted, 5),
        within(fitted, predicted, 0.01),
        f"fitted rate {fitted:.5f} per step, predicted "
        f"1 - 2 eta kappa2 Q/d = {predicted:.5f}",
    )
