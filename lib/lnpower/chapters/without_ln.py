"""The chapter without_ln (Theorem 4.2, Appendix B): the layer without LN
stops at the fixed point gamma* with a loss above zero; beyond the theorem,
that point is a saddle off the structured family, which SGD leaves."""

from __future__ import annotations

import numpy as np

from .. import cache as _cache
from .. import dynamics, saddle, theory
from ..cache import memo
from ..claims.status import over_seeds, verdict, within
from ..config import PAPER, paper_task
from ..tasks import POWER_STEP_TARGETS, TASK_NAMES, TASKS
from .ensembles import POOLED_BASES, ensemble, pooled
from .measurements import gamma_star, target_name, test_loss_stderr
from .population import BIG, sample


def kappa_closed_forms():
    k = theory.kappas(sample("sphere", BIG))
    ex = theory.kappas_exact(paper_task())
    z = max(
        abs(k[i].value - ex[i]) / k[i].stderr for i in ("kappa1", "kappa2")
    )
    return (
        round(k["kappa2"].value, 4),
        verdict(z <= 4),
        f"Task 1 ({BIG:,} draws of its own): kappa2 = "
        f"{k['kappa2'].value:.4f}; kappa1, kappa2 within {z:.2f} standard "
        "errors of n/d, n(n+d-1)/d^2",
    )


def no_ln_irreducible():
    sm = sample("sphere", BIG)
    l1 = theory.no_ln_optimum(sm, "normalized")["loss"]
    l2 = theory.no_ln_optimum(sm, "unnormalized")["loss"]
    ok = min(l1, l2) > 0.1
    return (
        round(min(l1, l2), 4),
        verdict(ok),
        f"L1* = {l1:.4f}, L2* = {l2:.4f}",
    )


def no_ln_pool(target: str) -> dict[str, list]:
    """The no-LN layer's runs on ``target`` pooled over the seed bases
    (:func:`~lnpower.chapters.ensembles.pooled`): per task, ``(shift,
    history)`` for every base and seed."""
    pool = pooled("layer", norm="none", target=target)
    return {
        t: [(b, h) for b, runs in pool.items() for h in runs[t]] for t in TASKS
    }


def no_ln_gamma_star():
    """Theorem 4.2: gamma~ at t = 500 within 2 % of gamma*, per seed (the
    worst of the four runs: both tasks, both targets), over the seeds of
    three seed bases (its status changed with the base on five)."""
    devs = np.max(
        [
            [abs(h.product[500] / gamma_star(task, target) - 1) for _, h in hs]
            for target in POWER_STEP_TARGETS
            for task, hs in no_ln_pool(target).items()
        ],
        axis=0,
    )
    return over_seeds(
        devs,
        devs < 0.02,
        quantity="|gamma~_500 / gamma* - 1|, worst of the four runs",
        detail=f"{POOLED_BASES} seed bases pooled",
    )


def no_ln_loss_floor():
    """Theorem 4.2: without LN, train and test loss end at L2* (the
    unnormalised target) within 2 % or three standard errors of the test
    loss, per seed, over the seeds of three seed bases."""
    devs, ok, rows = [], [], []
    for task, hs in no_ln_pool("unnormalized").items():
        L = theory.no_ln_optimum(sample(task), "unnormalized")["loss"]
        tol = np.array(
            [max(0.02 * L, 3 * test_loss_stderr(h, b)) for b, h in hs]
        )
        test = np.array([h.test_loss[-1] / L - 1 for _, h in hs])
        train = np.array([h.train_loss[-1] / L - 1 for _, h in hs])
        devs.append(np.maximum(abs(test), abs(train)))
        ok.append(devs[-1] <= tol / L)
        rows.append(
            f"{TASK_NAMES[task]}: tolerance {100 * tol.min() / L:.1f}-"
            f"{100 * tol.max() / L:.1f} %, train - L* "
            f"{100 * np.median(train):+.1f} "
            f"%, test - L* {100 * test.min():+.1f} to {100 * test.max():+.1f} "
            "%"
        )
    return over_seeds(
        np.max(devs, axis=0),
        np.all(ok, axis=0),
        quantity="the worst relative distance of a loss from L*",
        detail=f"{POOLED_BASES} seed bases pooled; " + "; ".join(rows),
    )


def predicted_rate(task: str = "sphere"):
    """Theorem 4.2's linear rate near gamma* (unnormalised target): the
    reduced recursion from (0, v0) for 300 steps, and the contraction
    1 - 2 eta kappa2 Q*/d per step at its end, Q* = alpha~^2 + beta~^2."""
    opt = theory.no_ln_optimum(sample(task), "unnormalized")
    F = dynamics.no_ln_F(opt["kappa2"], opt["gamma_star"], PAPER.d)
    t, w, v = dynamics.run(F, 0.0, PAPER.v0, PAPER.lr, 300)
    Q = w[-1] ** 2 + v[-1] ** 2
    predicted = 1 - PAPER.lr * Q * 2 * opt["kappa2"] / PAPER.d
    return (t, w * v, opt["gamma_star"]), predicted


def sgd_rate(product, start: int = 20, tail: int = 500) -> tuple[float, int]:
    """The per-step rate at which one SGD run's gamma~_t approaches its
    limit, and the last step fitted: ``|gamma~_t - g|`` with g the median of
    the last ``tail`` steps, fitted log-linearly from ``start`` while it is
    above 10 times the standard deviation of those steps (SGD's noise
    floor, below which no rate can be read)."""
    p = np.asarray(product, dtype=float)
    floor = p[-tail:]
    err = np.abs(p - np.median(floor))
    steps = np.arange(len(p))
    above = np.flatnonzero((steps >= start) & (err > 10 * floor.std()))
    if len(above) < 6:
        raise ValueError(
            f"gamma~ leaves the noise floor for {len(above)} steps after "
            f"step {start}: too few to fit a rate"
        )
    k = slice(start, above.max() + 1)
    return float(np.exp(np.polyfit(steps[k], np.log(err[k]), 1)[0])), int(
        above.max()
    )


def no_ln_linear_rate():
    (t, g, g_star), predicted = predicted_rate()
    err = np.abs(g - g_star)
    keep = (t > 100) & (err > 1e-13)
    fitted = np.exp(np.polyfit(t[keep], np.log(err[keep]), 1)[0])
    return (
        round(fitted, 5),
        within(fitted, predicted, 0.01),
        f"fitted rate {fitted:.5f} per step, predicted "
        f"1 - 2 eta kappa2 Q/d = {predicted:.5f}",
    )


def no_ln_linear_rate_sgd():
    """Theorem 4.2's linear convergence by SGD: per seed and task
    (unnormalised target), the rate at which gamma~_t approaches its limit
    (:func:`sgd_rate`) against the theorem's 1 - 2 eta kappa2 Q*/d, within
    20 % in 1 - rate."""
    runs = ensemble("layer", norm="none", target="unnormalized")
    dev, rows = [], []
    for task, hs in runs.items():
        predicted = predicted_rate(task)[1]
        fits = [sgd_rate(h.product) for h in hs]
        dev.append([(1 - r) / (1 - predicted) - 1 for r, _ in fits])
        rows.append(
            f"{TASK_NAMES[task]}: predicted {predicted:.4f}, SGD "
            f"{min(r for r, _ in fits):.4f} to {max(r for r, _ in fits):.4f}"
            f" (fitted from step 20 to {min(k for _, k in fits)}-"
            f"{max(k for _, k in fits)})"
        )
    worst = np.max(np.abs(dev), axis=0)
    return over_seeds(
        worst,
        worst < 0.2,
        quantity="the worst relative distance of 1 - rate from the "
        "theorem's, of the two tasks",
        detail="; ".join(rows),
    )


# --- beyond Theorem 4.2: the no-LN fixed point off the structured family


def fixed_point(task: str, target: str) -> tuple[float, float]:
    """(alpha~, beta~) where population gradient descent from (0, v0) stops
    (Theorem 4.2)."""
    opt = theory.no_ln_optimum(sample(task), target)
    F = dynamics.no_ln_F(opt["kappa2"], opt["gamma_star"], PAPER.d)
    T = PAPER.steps
    _, a, b = dynamics.run(F, 0.0, PAPER.v0, PAPER.lr, T, [T])
    return float(a[-1]), float(b[-1])


@memo
def hessians(samples: int = 200_000) -> dict:
    """The population Hessian blocks at the no-LN fixed point, both tasks
    and targets (``{(task, target): {direction: block}}``, see
    ``saddle.hessian_blocks``; cached)."""
    flat = _cache.arrays(
        "hessians",
        _cache.code_key(__name__, samples=samples),
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
        for tg, blocks in saddle.hessian_blocks(
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


def no_ln_saddle():
    H = hessians()
    neg = H["sphere", "normalized"]["symmetric traceless"]
    z_neg = neg["eigenvalues"][0] / neg["stderr"]
    pos = [
        H["sphere", "unnormalized"][k]
        for k in ("symmetric traceless", "antisymmetric")
    ]
    z_pos = min(h["eigenvalues"][0] / h["stderr"] for h in pos)
    rows = [
        f"{TASK_NAMES[t]}/{target_name(tg)}: "
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


def no_ln_departure_generalises():
    hs = ensemble("layer", norm="none", target="normalized")["sphere"]
    L1 = theory.no_ln_optimum(sample("sphere", BIG), "normalized")["loss"]
    ratio = np.array([max(h.train_loss[-1], h.test_loss[-1]) / L1 for h in hs])
    return over_seeds(
        ratio,
        ratio < 0.99,
        quantity=f"the larger of train and test loss over L1(gamma1*) = "
        f"{L1:.4f}",
    )
