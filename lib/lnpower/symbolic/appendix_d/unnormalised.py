"""Appendix E: the layer as a normalised power step, scale invariance, the
contraction factor R(gamma) and its limit."""

from __future__ import annotations

import sympy as sp

from ..eigenbasis import (
    GENS,
    K_SYM,
    C,
    Lsym,
    frame,
    matvec,
)
from .expansion import _projections, _zero


def layer_is_normalised_power() -> sp.Expr:
    """Appendix D, step 4 (and step 1's LN): rescaling commutes with the
    linear map M, so ``LN(M LN(u)) = LN(M u)``: looping with LN after every
    loop gives ``M^L a/||M^L a||``, the direction of the unnormalised ``M^L
    a``. Checked for a symbolic 2 x 2 M and u: returns the difference
    (asserted 0)."""
    M = sp.Matrix(2, 2, sp.symbols("M11 M12 M21 M22", real=True))
    u = sp.Matrix(sp.symbols("u1 u2", real=True))

    def ln(z):
        return z / sp.sqrt(z.dot(z))

    diff = (ln(M * ln(u)) - ln(M * u)).applyfunc(
        lambda e: sp.simplify(sp.powsimp(e, force=True))
    )
    assert diff == sp.zeros(2, 1)
    return diff


def scale_invariance() -> sp.Expr:
    """Appendix D, step 4: the angle to Z does not see the scale: with u = O
    c and any k != 0, ``Dist^2(k u/||k u||, Z) = Dist^2(u/||u||, Z)``
    (symbolic eigenbasis, r = 1): both the numerator and the denominator of
    the scaled vector are k^2 times those of u (asserted). Returns Dist^2 of
    the scaled vector with the common k^2 cancelled."""
    R, gen, Qn, _ = frame()
    k = gen[K_SYM]
    U = matvec(Qn, [gen[x] for x in C])
    norm2, _, perp2 = _projections(U, 1, 1)
    norm2k, _, perp2k = _projections([k * x for x in U], 1, 1)
    assert norm2k == k**2 * norm2 and perp2k == k**2 * perp2
    return sp.cancel(perp2k.as_expr(*GENS) / norm2k.as_expr(*GENS))


def contraction_factor() -> dict[str, sp.Expr]:
    """Appendix D, step 4 and Appendix E: ``R(gamma) = (1 + gamma l)/(1 +
    gamma lambda_1)`` with l = lambda_{r+1} < lambda_1. Derived: ``R -
    l/lambda_1 = (lambda_1 - l)/(lambda_1 (1 + gamma lambda_1))`` (> 0),
    ``dR/dgamma = -(lambda_1 - l)/(1 + gamma lambda_1)^2`` (< 0), ``R ->
    l/lambda_1`` as gamma -> oo, and ``R^L -> (l/lambda_1)^L``."""
    g = sp.Symbol("gamma", positive=True)
    l1, gap = sp.symbols(
        "lambda1 delta", positive=True
    )  # l = lambda_1 - delta
    lnext = l1 - gap
    R = (1 + g * lnext) / (1 + g * l1)
    excess = sp.factor(R - lnext / l1)
    dR = sp.factor(sp.diff(R, g))
    lim = sp.limit(R, g, sp.oo)
    limL = sp.limit(R**Lsym, g, sp.oo)
    assert _zero(excess - gap / (l1 * (1 + g * l1))) and excess.is_positive
    assert _zero(dR + gap / (1 + g * l1) ** 2) and dR.is_negative
    assert _zero(lim - lnext / l1) and _zero(limL - (lnext / l1) ** Lsym)
    return {
        "R": R,
        "excess": excess,
        "dR": dR,
        "limit": lim,
        "limit_L": limL,
        "lambda_next": lnext,
    }
