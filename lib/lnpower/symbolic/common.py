"""Shared SymPy symbols and helpers of the derivations."""

from __future__ import annotations

import sympy as sp

eta, gamma, alpha, beta, F, d, n = sp.symbols(
    "eta gamma alpha beta F d n", real=True
)
k1, k2, k3 = sp.symbols("kappa1 kappa2 kappa3", positive=True)


def is_zero(expr) -> bool:
    """True when ``expr`` simplifies to 0."""
    return sp.simplify(sp.expand(expr)) == 0
