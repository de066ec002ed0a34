"""Appendix B.2.3: the gamma/Q/D recursions, the first iteration, the
descent lemma, the invariant set and the contraction."""

from __future__ import annotations

import math

import sympy as sp

from ..common import F, alpha, beta, d, eta, gamma, is_zero, k2
from .landscape import (
    landscape,
)
from .moments import identify
from .symbols import D, L_star, Q, beta0, gamma_star


def scalar_recursions() -> dict[str, sp.Expr]:
    """Appendix B.2.3: one step alpha' = alpha - eta beta F, beta' = beta -
    eta alpha F expanded, and gamma' = alpha' beta', Q' = alpha'^2 +
    beta'^2, D' = beta'^2 - alpha'^2 each identified as a combination of
    gamma = alpha beta, Q = alpha^2 + beta^2, D = beta^2 - alpha^2
    (coefficients in eta, F). Asserts the paper's three recursions."""
    a1, b1 = alpha - eta * beta * F, beta - eta * alpha * F
    basis = {gamma: alpha * beta, Q: alpha**2 + beta**2, D: beta**2 - alpha**2}
    out = {}
    for name, expr in (
        ("gamma", a1 * b1),
        ("Q", a1**2 + b1**2),
        ("D", b1**2 - a1**2),
    ):
        coeffs = identify(expr, basis, [alpha, beta])
        out[name] = sum(c * sym for sym, c in coeffs.items())
    assert is_zero(
        out["gamma"] - (gamma - eta * Q * F + eta**2 * gamma * F**2)
    )
    assert is_zero(out["Q"] - ((1 + eta**2 * F**2) * Q - 4 * eta * gamma * F))
    assert is_zero(out["D"] - (1 - eta**2 * F**2) * D)
    return out


def recursions() -> dict[str, sp.Expr]:
    """The gamma/S/D recursions in terms of alpha, beta and F (keys
    ``gamma``, ``S``, ``D``; the paper's S_t is Q in
    :func:`scalar_recursions`, from which these are obtained)."""
    sub = {gamma: alpha * beta, Q: alpha**2 + beta**2, D: beta**2 - alpha**2}
    rec = scalar_recursions()
    return {
        "gamma": rec["gamma"].subs(sub),
        "S": rec["Q"].subs(sub),
        "D": rec["D"].subs(sub),
    }


def quadratic_F():
    """F(gamma) = L'(gamma)/d of the parabola L = L* + kappa2 (gamma -
    gamma*)^2 (symbolic gamma*, L*), which :func:`landscape` derives for
    both targets."""
    return sp.diff(L_star + k2 * (gamma - gamma_star) ** 2, gamma) / d


def first_step(target: str | None = None) -> dict[str, sp.Expr]:
    """Appendix B.2.3, Part 2: one step of alpha' = alpha - eta beta
    F(gamma), beta' = beta - eta alpha F(gamma) from alpha~_0 = 0, beta~_0 =
    beta0, with F = L'/d of the derived landscape of ``target`` (None: the
    parabola with symbolic gamma*). Returns alpha1, beta1, gamma1, Q1, D1."""
    if target is None:
        Fg, g_star = quadratic_F(), gamma_star
    else:
        land = landscape(target)
        Fg, g_star = land["F"], land["gamma_star"]
    a0, b0 = sp.S.Zero, beta0
    F0 = Fg.subs(gamma, a0 * b0)
    a1, b1 = sp.factor(a0 - eta * b0 * F0), sp.factor(b0 - eta * a0 * F0)
    assert is_zero(a1 - 2 * eta * beta0 * k2 * g_star / d) and b1 == beta0
    return {
        "alpha1": a1,
        "beta1": b1,
        "gamma1": sp.factor(a1 * b1),
        "Q1": sp.factor(a1**2 + b1**2),
        "D1": sp.factor(b1**2 - a1**2),
    }


def first_iteration() -> sp.Expr:
    """alpha~_1 from alpha~_0 = 0 (Appendix B.2.3, Part 2), computed by
    :func:`first_step`: ``2 eta beta0 kappa2 gamma*/d`` (gamma* symbolic)."""
    return first_step()["alpha1"]


def q_increment() -> sp.Expr:
    """Appendix B.2.3, Part 2: Q' - Q from :func:`scalar_recursions`,
    factored: ``eta F (eta F Q - 4 gamma)``, which is >= 0 whenever F <= 0
    and gamma >= 0 (so Q never decreases while gamma is in [0, gamma*]) --
    the lower bound Q_t >= Q_1 >= beta0^2."""
    inc = sp.factor(scalar_recursions()["Q"] - Q)
    assert is_zero(inc - eta * F * (eta * F * Q - 4 * gamma))
    return inc


def level_set() -> list:
    """Appendix B.2.3, Part 1: the ends of the sublevel set {L(gamma) <=
    L(gamma_0)} from gamma_0 = 0 for the parabola: the solutions of L(gamma)
    = L(0), i.e. [0, 2 gamma*]."""
    L = L_star + k2 * (gamma - gamma_star) ** 2
    ends = sorted(
        sp.solve(sp.Eq(L, L.subs(gamma, 0)), gamma),
        key=lambda e: e.subs(gamma_star, 1),
    )
    assert ends == [0, 2 * gamma_star]
    return ends


def descent_lemma() -> dict[str, sp.Expr]:
    """Theorem 4.2's descent lemma (Appendix B.2.3, Parts 1 and 3). For the
    quadratic ``L = L* + kappa2 (gamma - gamma*)^2`` (so F = L'/d) one step
    of the gamma recursion (:func:`scalar_recursions`) changes the loss by
    exactly ``-eta d Q F^2 + B`` with ``B = eta^2 d gamma F^3 + kappa2
    (eta^2 Q^2 F^2 - 2 eta^3 gamma Q F^3 + eta^4 gamma^2 F^4)`` (Q =
    alpha~^2 + beta~^2, the paper's S_t). Divided by ``eta d Q F^2``, B is
    ``chi u + vartheta (1 - chi u)^2`` with chi = eta F, u = gamma/Q (``|u|
    <= 1/2`` always) and vartheta = kappa2 eta Q/d (Greek, so that x and y
    keep their meanings elsewhere in the book). Under the first two
    conditions of eta_max, ``|chi| <= 1/4`` and vartheta <= 1/8, that ratio
    is at most 113/512 < 1/2: the loss falls by at least ``eta d Q F^2 / 2``
    per step (Part 3)."""
    chi, u, th = sp.symbols("chi u vartheta", real=True)
    L = lambda g: L_star + k2 * (g - gamma_star) ** 2
    Fg = sp.diff(L(gamma), gamma) / d
    g_next = scalar_recursions()["gamma"].subs(F, Fg)
    change = sp.expand(L(g_next) - L(gamma))
    B = eta**2 * d * gamma * F**3 + k2 * (
        eta**2 * Q**2 * F**2
        - 2 * eta**3 * gamma * Q * F**3
        + eta**4 * gamma**2 * F**4
    )
    assert is_zero(change - (-eta * d * Q * F**2 + B).subs(F, Fg))
    ratio = chi * u + th * (1 - chi * u) ** 2
    assert is_zero(
        (B / (eta * d * Q * F**2)).subs(gamma, u * Q)
        - ratio.subs({chi: eta * F, th: k2 * eta * Q / d})
    )
    # increasing in vartheta ((1 - chi u)^2 >= 0) and in p = chi u (slope 1 - 2
    # vartheta (1 - p) >= 1 - 9/32 > 0) on |p| <= 1/8, 0 <= vartheta <= 1/8:
    # the maximum is at the corner p = vartheta = 1/8
    p = sp.Symbol("p", real=True)
    slope = sp.diff(ratio.subs(chi * u, p), p)
    assert (
        slope.subs({p: -sp.Rational(1, 8), th: sp.Rational(1, 8)}) > 0
    )  # its smallest value
    ratio_max = ratio.subs(
        {chi: sp.Rational(1, 4), u: sp.Rational(1, 2), th: sp.Rational(1, 8)}
    )
    assert ratio_max == sp.Rational(113, 512) and ratio_max < sp.Rational(1, 2)
    return {
        "change": -eta * d * Q * F**2 + B,
        "ratio": ratio,
        "ratio_max": ratio_max,
    }


def contraction() -> dict[str, sp.Expr]:
    """Appendix B.2.3, Part 3: with F = (2 kappa2/d)(gamma - gamma*) and L -
    L* = kappa2 (gamma - gamma*)^2, the descent bound -eta d Q F^2/2 equals
    -(2 eta kappa2 Q/d)(L - L*), so L_{t+1} - L* <= (1 - 2 eta kappa2
    Q_t/d)(L_t - L*). Returns the factor ``1 - 2 eta kappa2 Q/d``."""
    Fg = quadratic_F()
    excess = k2 * (gamma - gamma_star) ** 2
    bound = -eta * d * Q * Fg**2 / 2
    factor = sp.factor(sp.cancel((excess + bound) / excess))
    assert is_zero(factor - (1 - 2 * eta * k2 * Q / d))
    return {"factor": factor, "bound": sp.factor(bound)}


def eta_max(
    kappa2: float, g_star: float, dim: int, S0: float
) -> dict[str, float]:
    """The paper's closed form of eta_max (Appendix B.2.3, second line):
    ``min{d/(8 kappa2 sqrt(1 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2
    sqrt(2 S0 gamma*))}`` evaluated numerically, with its three terms."""
    values = [
        dim / (8 * kappa2 * math.sqrt(1 + 16 * g_star**2)),
        dim / (2 * kappa2 * S0),
        dim / (2 * kappa2 * math.sqrt(2 * S0 * g_star)),
    ]
    return {"terms": values, "eta_max": min(values)}


def eta_max_first_line(
    kappa2: float,
    g_star: float,
    dim: int,
    S0: float,
    F_max: float,
    S_max: float,
    Gamma: float,
) -> list[float]:
    """The six terms of the first line of eta_max (Appendix B.2.3) for given
    bounds ``F_max >= |F_t|``, ``S_max >= Q_t``, ``Gamma >= |gamma_t|`` (the
    paper's definitions of these did not survive the extraction; the caller
    measures them along the trajectory)."""
    return [
        1 / (4 * F_max),
        dim / (8 * kappa2 * S_max),
        math.sqrt(dim / (16 * kappa2 * Gamma * F_max)),
        (dim / (16 * kappa2 * Gamma * F_max**2)) ** (1 / 3),
        dim / (2 * kappa2 * S0),
        dim / (2 * kappa2 * math.sqrt(2 * S0 * g_star)),
    ]
