"""Appendix C.3: the loss as a function of gamma, its bound and the time to
reach a loss epsilon.
"""

from __future__ import annotations

import sympy as sp

from ..common import d, gamma, is_zero
from .growth import (
    reduced_loss,
)
from .symbols import (
    C1,
    Upsilon3,
    c,
    dim,
    h2,
    q,
    s,
    scalar,
    x,
)


def unit_distance() -> dict:
    """Appendix C.3, step 1, for symbolic d: for unit vectors y, t with
    y^T t = cos theta, ``||y - t||^2 = 2 - 2 cos theta``."""
    y = sp.MatrixSymbol("y", dim, 1)
    t = sp.MatrixSymbol("t", dim, 1)
    k = sp.Symbol(r"\cos\theta", real=True)
    dist = scalar(
        (y - t).T * (y - t), {y.T * y: 1, t.T * t: 1, y.T * t: k, t.T * y: k}
    )
    assert is_zero(dist - (2 - 2 * k))
    return {"distance": dist, "cos": k}


def loss_bound() -> dict:
    """Appendix C.3, step 2: for 0 <= cos theta <= 1, ``2 - 2 cos theta <= 2
    sin^2 theta`` (the gap is 2 cos theta (1 - cos theta)); ``sin^2 theta =
    (1 - omega^2)/(x^2 + 2x omega + 1) <= (1 - omega^2)/x^2`` (the gap is (1
    - omega^2)(2x omega + 1)/(x^2 (x^2 + 2x omega + 1)) >= 0); and ``2 (1 -
    omega^2)/x^2 = 2 (s^2 - q^2)/(gamma^2 s^4)``, whose mean is 2
    Upsilon3/gamma^2."""
    k = sp.Symbol("k", real=True)  # cos theta
    gap1 = sp.factor(2 * (1 - k**2) - (2 - 2 * k))
    assert is_zero(gap1 - 2 * k * (1 - k))
    cos = reduced_loss()["cos_xc"]
    sin2 = sp.cancel(sp.expand(1 - cos**2))
    assert is_zero(sin2 - (1 - c**2) / h2)
    gap2 = sp.factor(sp.cancel((1 - c**2) / x**2 - sin2))
    assert is_zero(gap2 - (1 - c**2) * (2 * x * c + 1) / (x**2 * h2))
    bound = 2 * (1 - c**2) / x**2
    in_sq = sp.simplify(bound.subs({c: q / s, x: gamma * s}))
    assert is_zero(in_sq - 2 * (s**2 - q**2) / (gamma**2 * s**4))
    return {
        "gap_cos": gap1,
        "sin2": sin2,
        "gap_sin": gap2,
        "bound": bound,
        "bound_sq": in_sq,
    }


def iterations() -> dict:
    """Appendix C.3, step 3: with loss <= 2 Upsilon3/gamma^2 and
    gamma_t >= C2 t^(1/3), C2 = (2 eta C1)^(1/3), C1 = 2 Upsilon3/d, the loss
    is <= eps once t >= T*(eps) = d sqrt(Upsilon3/2)/(eta eps^(3/2))."""
    t, eps, et = sp.symbols("t epsilon eta", positive=True)
    C2 = (2 * et * C1) ** sp.Rational(1, 3)
    bound_t = 2 * Upsilon3 / (C2 * t ** sp.Rational(1, 3)) ** 2
    (root,) = sp.solve(sp.Eq(bound_t, eps), t)
    Tstar = sp.simplify(root.subs(C1, 2 * Upsilon3 / d))
    closed = d * sp.sqrt(Upsilon3 / 2) / (et * eps ** sp.Rational(3, 2))
    assert sp.simplify(Tstar - closed) == 0
    return dict(T_star=Tstar, C2=C2, bound_t=bound_t, eps=eps, t=t, eta=et)
