"""Shared symbols"""

from __future__ import annotations

import sympy as sp

dim, cols = sp.symbols("d n", integer=True, positive=True)  # shapes only
X = sp.MatrixSymbol("X", dim, cols)
a = sp.MatrixSymbol("a", dim, 1)
S = X * X.T
BLOCKS = ("11", "12", "21", "22")
W = {k: sp.MatrixSymbol(f"W_{{{k}}}", dim, dim) for k in BLOCKS}
V = {k: sp.MatrixSymbol(f"V_{{{k}}}", dim, dim) for k in BLOCKS}
s, q = sp.symbols("s q", positive=True)
c, x = sp.symbols(
    "omega x", nonnegative=True
)  # c: the cosine q/s, shown as omega
Q, D = sp.symbols("Q D", real=True)
beta0 = sp.Symbol("beta_0", positive=True)
# gamma^3 F, Q/(2 gamma) and 1/gamma in the limit of the gamma^3 increment
phi, psi, u = sp.symbols(
    "Phi Psi u", real=True
)  # shown as capitals: phi, psi name angles
Upsilon3, C1 = sp.symbols("Upsilon3 C1", positive=True)
h2 = x**2 + 2 * x * c + 1  # ||h||^2 in the reduced variables x, c


def is_zero_matrix(M) -> bool:
    """True when a matrix expression (or explicit matrix) expands to zero."""
    M = sp.expand(M)
    if isinstance(M, sp.MatrixBase):
        return M.applyfunc(sp.expand) == sp.zeros(*M.shape)
    return M == 0 or bool(getattr(M, "is_ZeroMatrix", False))


def scalar(expr, rules: dict) -> sp.Expr:
    """A 1 x 1 matrix expression as a scalar, with the 1 x 1 products named
    in ``rules`` replaced by scalars; asserts that none is left over."""
    one = sp.Identity(1)
    out = sp.expand(expr).subs({k: v * one for k, v in rules.items()})
    out = sp.expand(sp.Matrix(out.as_explicit())[0, 0])
    assert not any(isinstance(f, sp.MatrixSymbol) for f in out.free_symbols)
    return out


def equal_given_norm(lhs, rhs, H) -> bool:
    """``lhs == rhs`` for expressions in sqrt(H) (H a polynomial): write
    every power H^e (e rational) as chi^(2e) with chi^2 = H, clear
    denominators and reduce the numerator modulo chi^2 - H."""
    chi = sp.Dummy("chi", positive=True)
    H = sp.expand(H)

    def power_of_H(z):
        return z.is_Pow and z.exp.is_Rational and sp.expand(z.base - H) == 0

    diff = (lhs - rhs).replace(power_of_H, lambda z: chi ** (2 * z.exp))
    num = sp.numer(sp.together(diff))
    return sp.rem(sp.expand(num), chi**2 - H, chi) == 0
