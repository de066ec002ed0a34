"""The paper's population quantities (§4.1-4.2, Appendices A-C), by float64
Monte Carlo with a seed and a standard error: the moments kappa, the
Upsilons and C1, gamma* and the irreducible losses, and the checks of
Assumption (A3). The Monte Carlo machinery (``Sample``, ``draw``, ``mean``)
and the loss landscapes as functions of gamma or rho (``lnpower.landscape``)
are re-exported here, so that ``theory`` is the one place to look.

Per-sample summaries used throughout: ``s = ||S a||``, ``q = a^T S a`` and,
for looped models, the eigenvalues ``lam`` of S (descending) with ``c2 =
<v_i, a>^2``."""

from __future__ import annotations

import math

import numpy as np
import torch

from .landscape import (
    c_L,
    ln_layer_dloss,
    ln_layer_loss,
    looped_dloss,
    looped_loss,
    no_ln_loss,
    power_method_loss,
)
from .montecarlo import Estimate, Sample, draw, mean
from .tasks import Task, generator

__all__ = [
    "C1",
    "Estimate",
    "Sample",
    "c_L",
    "constants",
    "draw",
    "kappas",
    "kappas_exact",
    "ln_layer_dloss",
    "ln_layer_loss",
    "looped_dloss",
    "looped_loss",
    "mean",
    "no_ln_loss",
    "no_ln_optimum",
    "power_method_loss",
    "smallest_eigenvalues",
    "tail_index",
    "upsilon",
    "upsilon3",
]


def kappas(sample: Sample) -> dict[str, Estimate]:
    """kappa1 = E[a^T S a], kappa2 = E||Sa||^2, kappa3 = E||Sa|| (Appendix
    B)."""
    return {
        "kappa1": mean(sample.q),
        "kappa2": mean(sample.s**2),
        "kappa3": mean(sample.s),
    }


def kappas_exact(task: Task) -> dict[str, float]:
    """Closed forms (derived): kappa1 = n/d for both tasks; kappa2 =
    n(n+d-1)/d^2 (Task 1) or sum(m_i^2)/d (Task 2). kappa3 has none."""
    d, n = task.d, task.n
    k2 = (
        n * (n + d - 1) / d**2
        if task.name == "sphere"
        else sum(mi**2 for mi in task.m) / d
    )
    return {"kappa1": n / d, "kappa2": k2}


def upsilon(sample: Sample) -> Estimate:
    """Upsilon(n, d) = E[1 / lambda_d(X)] of Assumption (A3)."""
    return mean(1.0 / sample.lam[:, -1])


def upsilon3(sample: Sample) -> Estimate:
    """Upsilon_3 = E[(||Sa||^2 ||a||^2 - (a^T S a)^2) / ||Sa||^4] (Appendix
    C.2.2)."""
    s, q = sample.s, sample.q
    return mean((s**2 - q**2) / s**4)


def C1(sample: Sample) -> Estimate:
    """C1 = 2 Upsilon_3 / d, the constant of Theorem 4.3's gamma^3
    increment (Appendix C.2.2)."""
    u, d = upsilon3(sample), sample.task.d
    return Estimate(2 * u.value / d, 2 * u.stderr / d)


def no_ln_optimum(sample: Sample, target: str) -> dict[str, float]:
    """gamma* and the irreducible loss L(gamma*) of the layer without LN
    (Theorem 4.2): normalized: gamma1* = (kappa3 - kappa1)/kappa2, L1* =
    E[2 - 2 a^T S a/||Sa||] - (k3-k1)^2/k2; unnormalized: gamma2* = 1 -
    kappa1/kappa2, L2* = 1 - kappa1^2/kappa2. Also the Cauchy-Schwarz lower
    bound E[1 - (a^T S a)^2/||Sa||^2] for the normalized case."""
    s, q = sample.s, sample.q
    k1, k2, k3 = q.mean(), (s**2).mean(), s.mean()
    if target == "normalized":
        g = (k3 - k1) / k2
        loss = (2 - 2 * q / s).mean() - (k3 - k1) ** 2 / k2
        return {
            "gamma_star": g,
            "loss": loss,
            "lower_bound": (1 - q**2 / s**2).mean(),
            "kappa2": k2,
        }
    if target == "unnormalized":
        return {
            "gamma_star": 1 - k1 / k2,
            "loss": 1 - k1**2 / k2,
            "kappa2": k2,
        }
    raise ValueError(
        f"target must be 'normalized' or 'unnormalized', got {target!r}"
    )


def constants(
    task: Task,
    samples: int = 200_000,
    seed: int = 0,
    loops: int | None = None,
    sample: Sample | None = None,
) -> dict[str, Estimate | float]:
    """Every constant of the theory for ``task`` (what ``python -m lnpower
    theory`` prints)."""
    sm = sample or draw(task, samples, seed)
    out: dict = dict(kappas(sm))
    for target, key in (
        ("normalized", "normalized"),
        ("unnormalized", "unnormalized"),
    ):
        opt = no_ln_optimum(sm, target)
        out[f"gamma_star_{key}"] = opt["gamma_star"]
        out[f"irreducible_loss_{key}"] = opt["loss"]
    out["cauchy_schwarz_bound"] = no_ln_optimum(sm, "normalized")[
        "lower_bound"
    ]
    out["upsilon"] = upsilon(sm)
    out["upsilon3"] = upsilon3(sm)
    out["C1"] = C1(sm)
    if loops is not None:
        out["power_method_loss"] = power_method_loss(sm, loops)
        out["c_L"] = c_L(sm, loops)
    return out


def tail_index(x, frac: float = 0.01) -> Estimate:
    """Hill estimator of the tail index tau of a positive sample X
    (P(X > u) ~ u^-tau), from its largest ``frac`` share, with the
    asymptotic standard error tau/sqrt(k). E[X] is finite only if tau > 1:
    applied to 1/lambda_d it tests (A3)."""
    x = np.sort(np.asarray(x, dtype=np.float64))[::-1]
    k = max(int(frac * len(x)), 10)
    alpha = 1.0 / np.mean(np.log(x[:k] / x[k]))
    return Estimate(float(alpha), float(alpha / math.sqrt(k)))


def smallest_eigenvalues(
    task: Task, samples: int, seed: int = 0
) -> np.ndarray:
    """lambda_d(X) for ``samples`` draws of X (Assumption A3's variable)."""
    X = task.sample_X(samples, generator(seed))
    return torch.linalg.eigvalsh(X @ X.mT)[:, 0].clamp_min(0).numpy()
