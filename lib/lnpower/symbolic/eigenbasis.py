"""The symbolic orthonormal eigenbasis of Appendices A, D and E, in exact
polynomial arithmetic: a rotation of R^3 in the Cayley parametrisation ``O =
(I - A)(I + A)^{-1}`` (A skew-symmetric, three free symbols), the
coordinates of a in it, and the numerators of ``(I + shift S)^L a``.
Identities derived in it are rational identities in the three parameters, so
they hold on all of SO(3) by continuity."""

from __future__ import annotations

from functools import cache

import sympy as sp

from .common import check, gamma

lam1, lam2, lam3 = LAMBDAS = sp.symbols("lambda1:4", positive=True)
C = sp.Matrix(
    sp.symbols("c1:4", real=True)
)  # coordinates of a in the eigenbasis
rho = sp.Symbol("rho", positive=True)
Lsym = sp.Symbol("L", positive=True, integer=True)
P_SYMS = sp.symbols("p1:4", real=True)  # the rotation's parameters
M_SYMS = sp.symbols(
    "nu1:4", positive=True
)  # nu_i = mu_i^L (Appendix D, step 2)
K_SYM = sp.Symbol("k", nonzero=True, real=True)  # a scale (step 4)
GENS = (*P_SYMS, *LAMBDAS, *C, gamma, rho, *M_SYMS, K_SYM)


# Q = (I - K)(I + K)^{-1} = Qn/n0 with Qn = (I - K) adj(I + K) and n0 = det(I +
# K) = 1 + p1^2 + p2^2 + p3^2. Every vector below is kept as (polynomial
# numerator, power of n0), and every identity is checked as an equality of
# polynomials (or an exact division by a power of n0): no rational
# simplification is needed.


def matvec(A, x):
    return [sum(A[i][j] * x[j] for j in range(len(x))) for i in range(len(A))]


def transpose(A):
    return [list(row) for row in zip(*A)]


def dot(x, y):
    return sum(a * b for a, b in zip(x, y))


def exact(num, den):
    """num/den for polynomials when den divides num (checked)."""
    q, r = num.div(den)
    check(r == 0, "eigenbasis: an exact polynomial division has no remainder")
    return q


@cache
def frame():
    """The polynomial ring, its generators by symbol, Qn and n0; checks
    ``det(I + K) = n0``, ``Qn^T Qn = n0^2 I`` (Q is orthogonal) and ``det Qn
    = n0^3`` (a rotation)."""
    R, *gens = sp.ring(GENS, sp.QQ)
    gen = dict(zip(GENS, gens))
    p1, p2, p3 = P_SYMS
    K = sp.Matrix([[0, -p3, p2], [p3, 0, -p1], [-p2, p1, 0]])
    eye = sp.eye(3)
    n0_expr = 1 + p1**2 + p2**2 + p3**2
    check(
        sp.expand((eye + K).det() - n0_expr) == 0,
        "Cayley frame: det(I + K) = n0",
    )
    Qn_expr = ((eye - K) * (eye + K).adjugate()).applyfunc(sp.expand)
    Qn = [[R(Qn_expr[i, j]) for j in range(3)] for i in range(3)]
    n0 = R(n0_expr)
    QnT = transpose(Qn)
    for i in range(3):
        for j in range(3):
            check(
                dot(QnT[i], QnT[j]) == (n0**2 if i == j else 0),
                f"Cayley frame: Qn^T Qn = n0^2 I at entry ({i + 1}, {j + 1})",
            )
    check(
        R(Qn_expr.det()) == n0**3, "Cayley frame: det Qn = n0^3 (a rotation)"
    )
    return R, gen, Qn, n0


def cayley_basis() -> sp.Matrix:
    """A symbolic rotation O of R^3 (Cayley parametrisation, symbols p1, p2,
    p3), orthogonal with determinant 1 (checked by :func:`frame`). Its
    columns are the eigenbasis v_1..v_3."""
    _, _, Qn, n0 = frame()
    n0e = n0.as_expr(*GENS)
    return sp.Matrix(3, 3, lambda i, j: Qn[i][j].as_expr(*GENS) / n0e)


def shifted_power(L: int, shift):
    """Numerators of ``u = M^L a`` (M = I + shift S, S = O diag(lambda) O^T,
    a = O c, O the Cayley rotation): u = U/n0^(2L+1), and of ``O^T u =
    Z/n0^(2L+2)``; checks S v_i = lambda_i v_i."""
    R, gen, Qn, n0 = frame()
    lam = [gen[x] for x in LAMBDAS]
    t = gen[shift]
    QnT = transpose(Qn)
    Sn = [
        [sum(Qn[i][k] * lam[k] * Qn[j][k] for k in range(3)) for j in range(3)]
        for i in range(3)
    ]  # S = Sn/n0^2
    for i in range(3):  # S v_i = lambda_i v_i with v_i = Qn[:, i]/n0
        check(
            matvec(Sn, QnT[i]) == [n0**2 * lam[i] * x for x in QnT[i]],
            f"eigenbasis: S v_{i + 1} = lambda_{i + 1} v_{i + 1}",
        )
    U = matvec(Qn, [gen[x] for x in C])  # a = U/n0
    for _ in range(L):
        SU = matvec(Sn, U)
        U = [n0**2 * x + t * y for x, y in zip(U, SU)]  # u = U/n0^(2k+1)
    return U, matvec(QnT, U)
