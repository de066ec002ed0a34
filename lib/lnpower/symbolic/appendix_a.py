"""Appendices A and F: the looped model (Theorem 4.1). The rho^2 increment."""

from __future__ import annotations

import sympy as sp

from .common import d, eta, is_zero


def looped_increment() -> sp.Expr:
    """Theorem 4.1's rate: with L_L = L_inf + c/rho, F = -c/(d rho^2) and w = v (S = 2 rho),
    ``rho'^2 - rho^2 -> 4 eta c / d``."""
    rho, c = sp.symbols("rho c", positive=True)
    Fr = sp.diff(c / rho, rho) / d
    r_next = rho - eta * 2 * rho * Fr + eta**2 * rho * Fr**2
    lim = sp.limit(sp.expand(r_next**2 - rho**2), rho, sp.oo)
    assert is_zero(lim - 4 * eta * c / d)
    return lim
