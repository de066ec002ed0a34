"""Shared symbols"""

from __future__ import annotations

import sympy as sp

from ..common import k1, k2, k3

k0 = sp.Symbol("kappa0", positive=True)  # E[a^T S a/||Sa||]
q, s = sp.symbols("q s", positive=True)  # per sample: a^T S a and ||Sa||
Q, D = sp.symbols(
    "Q D", real=True
)  # alpha~^2 + beta~^2 (the paper's S_t), beta~^2 - alpha~^2
beta0, gamma_star, L_star = sp.symbols(
    "beta0 gamma_star L_star", positive=True
)
TARGETS = ("normalized", "unnormalized")

# E of the per-sample scalars (by linearity): the moments of Appendix B.2
MOMENTS = {sp.S.One: sp.S.One, q: k1, s**2: k2, s: k3, q / s: k0}
