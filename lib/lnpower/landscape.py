"""The loss landscapes of the three models under the structure (4.2), as
functions of one number, on a Monte Carlo sample: the layer without LN (a
quadratic in gamma, Theorem 4.2), the layer with LN (Theorem 4.3) and the
looped model (the eigen-expansion of Dist^2, Theorem 4.1), with their
derivatives, the power method's error L_L^(inf) and the constant c_L."""

from __future__ import annotations

import numpy as np

from .montecarlo import Estimate, Sample, mean


def no_ln_loss(sample: Sample, gamma, target: str):
    """Population loss of y~ = a + gamma S a against the target (4.4), per
    gamma."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, q = sample.s, sample.q
    if target == "normalized":
        return (1 + 2 * g * q + g**2 * s**2 - 2 * q / s - 2 * g * s + 1).mean(
            -1
        )
    return (1 + 2 * (g - 1) * q + (g - 1) ** 2 * s**2).mean(-1)


def ln_layer_loss(sample: Sample, gamma):
    """Population loss of y = h/||h||, h = a + gamma S a, against Sa/||Sa||
    (4.5): ``E[2 - 2 (omega + x)/sqrt(x^2 + 2 x omega + 1)]`` with
    x = gamma ||Sa||, omega = a^T S a/||Sa||."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, c = sample.s, sample.q / sample.s
    x = g * s
    return (2 - 2 * (x + c) / np.sqrt(x * x + 2 * x * c + 1)).mean(-1)


def ln_layer_dloss(sample: Sample, gamma):
    """d/dgamma of :func:`ln_layer_loss`: ``-2 E[s (1 - omega^2) / (x^2 +
    2 x omega + 1)^{3/2}]`` with omega = a^T S a/||Sa||."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, c = sample.s, sample.q / sample.s
    x = g * s
    t = x * x + 2 * x * c + 1
    return (-2 * s * (1 - c * c) / (t * np.sqrt(t))).mean(-1)


def _ipow(x: np.ndarray, k: int) -> np.ndarray:
    """``x**k`` for an integer k >= 1 by repeated squaring (several times
    faster than a general power on large arrays)."""
    out = None
    while k:
        if k & 1:
            out = x.copy() if out is None else out * x
        k >>= 1
        if k:
            x = x * x
    return out


def _looped_terms(sample: Sample, rho, L: int):
    """Weights c_i^2 (mu_i/mu_1)^{2L} and their rho-derivatives, mu_i = 1 +
    rho lam_i; shapes ``(*rho.shape, K, d)``."""
    rho = np.asarray(rho, dtype=np.float64)[..., None, None]
    mu = 1 + rho * sample.lam
    w = sample.c2 * _ipow(mu / mu[..., :1], 2 * L)
    dw = w * 2 * L * (sample.lam / mu - sample.lam[:, :1] / mu[..., :1])
    return w, dw


def looped_loss(sample: Sample, rho, L: int):
    """L_L(rho) = E[Dist^2((I + rho S)^L a / ||.||, V(X))] under the
    structure (4.2)."""
    w, _ = _looped_terms(sample, rho, L)
    return (np.where(sample.top, 0, w).sum(-1) / w.sum(-1)).mean(-1)


def looped_dloss(sample: Sample, rho, L: int):
    """d L_L / d rho, from the eigen-expansion of :func:`looped_loss`."""
    w, dw = _looped_terms(sample, rho, L)
    perp, dperp = (
        np.where(sample.top, 0, w).sum(-1),
        np.where(sample.top, 0, dw).sum(-1),
    )
    tot, dtot = w.sum(-1), dw.sum(-1)
    return ((dperp * tot - perp * dtot) / tot**2).mean(-1)


def power_method_loss(sample: Sample, L: int) -> Estimate:
    """L_L^(inf) = E[Dist^2(S^L a/||S^L a||, V(X))]: the error of L power
    iterations (Thm 4.1)."""
    p = sample.c2 * (sample.lam / sample.lam[:, :1]) ** (2 * L)
    return mean(np.where(sample.top, 0, p).sum(-1) / p.sum(-1))


def c_L(sample: Sample, L: int) -> Estimate:
    """c_L in L_L(rho) = L_L^(inf) + c_L/rho + o(1/rho) (derived, Appendix
    A.5): ``c_L = E[2L Pi_top sum_perp p_i (1/lam_i - 1/lam_1) / Pi^2]``,
    p_i = c_i^2 lam_i^{2L}, Pi = sum p_i, Pi_top the sum over the top
    eigenvalue."""
    lam = sample.lam / sample.lam[:, :1]
    p = sample.c2 * lam ** (2 * L)
    perp = np.where(
        sample.top, 0, p * (1 / np.clip(lam, 1e-300, None) - 1)
    ).sum(-1)
    P, Ptop = p.sum(-1), np.where(sample.top, p, 0).sum(-1)
    return mean(2 * L * Ptop * perp / P**2 / sample.lam[:, 0])
