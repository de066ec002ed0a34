"""Appendix B: the layer without LN (Theorem 4.2). The gamma/S/D recursions, the quadratic
loss landscapes and their minimisers, the first iteration and the descent lemma."""

from __future__ import annotations

import sympy as sp

from .common import F, alpha, beta, d, eta, gamma, is_zero, k1, k2, k3, n

m = sp.Symbol("m", positive=True)  # E[a^T S a/||Sa||], used by the normalised landscape


def recursions() -> dict[str, sp.Expr]:
    """The gamma/S/D recursions (Appendix B.2.3) from ``alpha' = alpha - eta beta F``,
    ``beta' = beta - eta alpha F`` with gamma = alpha beta, S = alpha^2 + beta^2,
    D = beta^2 - alpha^2:
    ``gamma' = gamma - eta S F + eta^2 gamma F^2``, ``S' = (1 + eta^2 F^2) S - 4 eta gamma F``,
    ``D' = (1 - eta^2 F^2) D``."""
    a1, b1 = alpha - eta * beta * F, beta - eta * alpha * F
    g, S, D = alpha * beta, alpha**2 + beta**2, beta**2 - alpha**2
    out = {"gamma": g - eta * S * F + eta**2 * g * F**2,
           "S": (1 + eta**2 * F**2) * S - 4 * eta * g * F,
           "D": (1 - eta**2 * F**2) * D}
    assert is_zero(a1 * b1 - out["gamma"])
    assert is_zero(a1**2 + b1**2 - out["S"])
    assert is_zero(b1**2 - a1**2 - out["D"])
    return out


def no_ln_landscape(target: str) -> dict[str, sp.Expr]:
    """L(gamma) of the layer without LN (Appendix B.2.1-2) as a quadratic in gamma with
    kappa1..3; its minimiser gamma*, L(gamma*), the identity
    L = L(gamma*) + kappa2 (gamma - gamma*)^2
    and F(gamma) = L'(gamma)/d = (2 kappa2/d)(gamma - gamma*).

    E||a + gamma Sa - t||^2 with ||a|| = 1 expands with E[a^T S a] = kappa1, E||Sa||^2 = kappa2 and,
    for t = Sa/||Sa||: E[a^T t] = m, E[(Sa)^T t] = kappa3, ||t|| = 1; for t = Sa: E[a^T t] = kappa1.
    """
    if target == "normalized":
        L = 1 + 2 * gamma * k1 + gamma**2 * k2 - 2 * m - 2 * gamma * k3 + 1
    elif target == "unnormalized":
        L = 1 + 2 * gamma * k1 + gamma**2 * k2 - 2 * k1 - 2 * gamma * k2 + k2
    else:
        raise ValueError(f"target must be 'normalized' or 'unnormalized', got {target!r}")
    (g_star,) = sp.solve(sp.diff(L, gamma), gamma)
    L_star = sp.simplify(L.subs(gamma, g_star))
    assert is_zero(L - (L_star + k2 * (gamma - g_star) ** 2))
    Fg = sp.diff(L, gamma) / d
    assert is_zero(Fg - 2 * k2 / d * (gamma - g_star))
    expected = ((k3 - k1) / k2, 2 - 2 * m - (k3 - k1) ** 2 / k2) if target == "normalized" \
        else (1 - k1 / k2, 1 - k1**2 / k2)
    assert is_zero(g_star - expected[0]) and is_zero(L_star - expected[1])
    return {"L": L, "gamma_star": g_star, "L_star": L_star, "F": sp.factor(Fg)}


def first_iteration() -> sp.Expr:
    """alpha~_1 from alpha~_0 = 0: ``alpha~_1 = -eta beta0 F(0) = 2 eta beta0 kappa2 gamma*/d``
    (Appendix B.2.3, Part 2; gamma* symbolic)."""
    g_star, beta0 = sp.symbols("gamma_star beta0", positive=True)
    a1 = 0 - eta * beta0 * (2 * k2 / d) * (0 - g_star)
    assert is_zero(a1 - 2 * eta * beta0 * k2 * g_star / d)
    return a1


def descent_lemma() -> dict[str, sp.Expr]:
    """Theorem 4.2's descent lemma (Appendix B.2.3, Parts 1 and 3). For the quadratic
    ``L = L* + kappa2 (gamma - gamma*)^2`` (so F = L'/d) one step of the recursion changes the
    loss by exactly ``-eta d S F^2 + B`` with
    ``B = eta^2 d gamma F^3 + kappa2 (eta^2 S^2 F^2 - 2 eta^3 gamma S F^3 + eta^4 gamma^2 F^4)``.
    Divided by ``eta d S F^2``, B is ``x r + y (1 - x r)^2`` with x = eta F, r = gamma/S
    (|r| <= 1/2 always) and y = kappa2 eta S/d. Under the first two conditions of eta_max,
    |x| <= 1/4 and y <= 1/8, that ratio is at most 113/512 < 1/2: the loss falls by at least
    ``eta d S F^2 / 2`` per step (Part 3)."""
    g_star, L_star, S = sp.symbols("gamma_star L_star S", real=True)
    x, r, y = sp.symbols("x r y", real=True)
    L = lambda g: L_star + k2 * (g - g_star) ** 2
    Fg = sp.diff(L(gamma), gamma) / d
    g_next = gamma - eta * S * Fg + eta**2 * gamma * Fg**2  # recursions()["gamma"]
    change = sp.expand(L(g_next) - L(gamma))
    B = eta**2 * d * gamma * F**3 + k2 * (eta**2 * S**2 * F**2 - 2 * eta**3 * gamma * S * F**3
                                          + eta**4 * gamma**2 * F**4)
    assert is_zero(change - (-eta * d * S * F**2 + B).subs(F, Fg))
    ratio = x * r + y * (1 - x * r) ** 2
    assert is_zero((B / (eta * d * S * F**2)).subs(gamma, r * S)
                 - ratio.subs({x: eta * F, y: k2 * eta * S / d}))
    # increasing in y ((1 - xr)^2 >= 0) and in p = xr (slope 1 - 2y(1 - p) >= 1 - 9/32 > 0) on
    # |p| <= 1/8, 0 <= y <= 1/8: the maximum is at the corner p = y = 1/8
    p = sp.Symbol("p", real=True)
    slope = sp.diff(ratio.subs(x * r, p), p)
    assert slope.subs({p: -sp.Rational(1, 8), y: sp.Rational(1, 8)}) > 0  # its smallest value
    ratio_max = ratio.subs({x: sp.Rational(1, 4), r: sp.Rational(1, 2), y: sp.Rational(1, 8)})
    assert ratio_max == sp.Rational(113, 512) and ratio_max < sp.Rational(1, 2)
    return {"change": -eta * d * S * F**2 + B, "ratio": ratio, "ratio_max": ratio_max}


def kappas_sphere() -> dict[str, sp.Expr]:
    """Task 1 moments: kappa1 = E tr(S)/d = n/d; kappa2 = E tr(S^2)/d with
    E tr(S^2) = n + n(n-1) E[(x_i^T x_j)^2] = n + n(n-1)/d, so kappa2 = n(n+d-1)/d^2."""
    kappa1 = n / d
    kappa2 = (n + n * (n - 1) / d) / d
    assert is_zero(kappa2 - n * (n + d - 1) / d**2)
    return {"kappa1": kappa1, "kappa2": sp.factor(kappa2)}
