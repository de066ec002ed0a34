"""Appendix D.1: the eigen-expansion of M^L a, the exact angular error,
the loss terms in the eigenbasis and the ordering of the shifted
eigenvalues."""

from __future__ import annotations

import sympy as sp

from ..common import gamma
from ..eigenbasis import (
    GENS,
    LAMBDAS,
    M_SYMS,
    C,
    Lsym,
    dot,
    exact,
    frame,
    matvec,
    rho,
    shifted_power,
)


def _zero(expr) -> bool:
    """True when a rational expression cancels to 0."""
    return sp.cancel(sp.together(expr)) == 0


def power_expansion(L: int = 3, shift=gamma) -> dict[str, object]:
    """Appendix D, step 1: ``M^L a = sum_i c_i mu_i^L v_i`` with ``M = I +
    shift S`` and ``mu_i = 1 + shift lambda_i``, computed from the
    definitions: L multiplications by M of ``a = O c`` in the symbolic
    eigenbasis O, then the coordinates ``O^T M^L a`` (exact polynomial
    division). Also the statement for a symbolic L on the diagonal form
    (``(I + shift Lambda)^L``). Returns the coordinates and the diagonal of
    the power."""
    R, gen, _, n0 = frame()
    _, Z = shifted_power(L, shift)
    coords = [exact(z, n0 ** (2 * L + 2)) for z in Z]
    t = gen[shift]
    for i in range(3):
        assert coords[i] == gen[C[i]] * (1 + t * gen[LAMBDAS[i]]) ** L, i
    mu = [1 + shift * lam for lam in LAMBDAS]
    diag_L = (sp.eye(3) + shift * sp.diag(*LAMBDAS)) ** Lsym
    assert all(_zero(diag_L[i, i] - mu[i] ** Lsym) for i in range(3))
    return {
        "coords": sp.Matrix([sp.factor(q.as_expr(*GENS)) for q in coords]),
        "diag_L": sp.Matrix([diag_L[i, i] for i in range(3)]),
    }


def _projections(U, r: int, power: int):
    """For u = U/n0^power and Z = span(v_1..v_r): the numerators of ||u||^2,
    ||Proj u||^2 and ||u - Proj u||^2 after exact division by the matching
    powers of n0; asserts that the projector ``Q diag(1..1, 0..0) Q^T`` is
    idempotent."""
    _, _, Qn, n0 = frame()
    Pn = [
        [sum(Qn[i][k] * Qn[j][k] for k in range(r)) for j in range(3)]
        for i in range(3)
    ]  # Proj = Pn/n0^2
    PnPn = [
        [dot(Pn[i], [Pn[k][j] for k in range(3)]) for j in range(3)]
        for i in range(3)
    ]
    assert PnPn == [[n0**2 * x for x in row] for row in Pn]
    PU = matvec(Pn, U)  # Proj u = PU/n0^(power + 2)
    perp = [
        n0**2 * x - y for x, y in zip(U, PU)
    ]  # u - Proj u = perp/n0^(power + 2)
    norm2 = exact(dot(U, U), n0 ** (2 * power))
    proj2 = exact(dot(PU, PU), n0 ** (2 * power + 4))
    perp2 = exact(dot(perp, perp), n0 ** (2 * power + 4))
    return norm2, proj2, perp2


def angle_expansion(r: int = 1) -> dict[str, sp.Expr]:
    """Appendix D, step 2, equation (D.1): for ``u = sum_i c_i mu_i^L v_i``
    (step 1), ``y = u/||u||`` and Z = span(v_1..v_r): ``sin^2 phi = 1 -
    cos^2 phi = 1 - ||Proj_Z y||^2 = Dist^2(y, Z) = ||y - Proj_Z y||^2 =
    sum_{i>r} c_i^2 mu_i^{2L} / sum_i c_i^2 mu_i^{2L}``, derived in
    the symbolic eigenbasis. Returns sin^2 (from cos) and Dist^2 (from the
    projection residual)."""
    if r not in (1, 2):
        raise ValueError(f"r must be 1 or 2 in d = 3, got {r}")
    R, gen, Qn, _ = frame()
    c = [gen[x] for x in C]
    m = [gen[x] for x in M_SYMS]
    U = matvec(Qn, [m[i] * c[i] for i in range(3)])  # u = U/n0
    norm2, proj2, perp2 = _projections(U, r, 1)
    assert norm2 == sum(c[i] ** 2 * m[i] ** 2 for i in range(3))
    assert perp2 == sum(c[i] ** 2 * m[i] ** 2 for i in range(r, 3))
    assert norm2 - proj2 == perp2  # 1 - cos^2 = Dist^2
    den = norm2.as_expr(*GENS)
    return {
        "sin2": (norm2 - proj2).as_expr(*GENS) / den,
        "dist2": perp2.as_expr(*GENS) / den,
        "m": M_SYMS,
    }


def eigen_loss_terms(L: int, shift=rho, r: int = 1) -> tuple[sp.Expr, sp.Expr]:
    """Numerator and denominator of ``||y - Proj y||^2`` for ``y = (I +
    shift S)^L a/||.||`` (Appendix A, the loss in the eigenbasis), from the
    definitions: u = M^L a multiplied out
    (:func:`~lnpower.symbolic.eigenbasis.shifted_power`), written as u = O
    (O^T u) (O is orthogonal) to keep the polynomials small, then ``||u -
    Proj u||^2`` and ``||u||^2``; asserted equal to ``sum_{i>r} c_i^2
    mu_i^{2L}`` and ``sum_i c_i^2 mu_i^{2L}``."""
    R, gen, Qn, n0 = frame()
    U, Z = shifted_power(L, shift)
    z = [exact(x, n0 ** (2 * L + 2)) for x in Z]  # coordinates Q^T u
    U1 = matvec(
        Qn, z
    )  # u = Q (Q^T u) = U1/n0, the same vector as U/n0^(2L+1):
    assert [n0 ** (2 * L) * x for x in U1] == U
    norm2, _, perp2 = _projections(U1, r, 1)
    t = gen[shift]
    w = [
        gen[C[i]] ** 2 * (1 + t * gen[LAMBDAS[i]]) ** (2 * L) for i in range(3)
    ]
    assert norm2 == sum(w) and perp2 == sum(w[r:])
    return perp2.as_expr(*GENS), norm2.as_expr(*GENS)


def mu_ordering() -> dict[str, sp.Expr]:
    """Appendix D, step 3: ``mu = 1 + gamma lambda`` and ``mu^{2L}`` are
    increasing in lambda for gamma > 0, lambda >= 0 (derivatives gamma and 2
    L gamma mu^{2L-1}, positive), so lambda_i <= lambda_{r+1} for i > r
    gives mu_i^{2L} <= mu_{r+1}^{2L}."""
    lam = sp.Symbol("lambda", nonnegative=True)
    g = sp.Symbol("gamma", positive=True)
    mu = 1 + g * lam
    dmu = sp.diff(mu, lam)
    dpow = sp.factor(sp.diff(mu ** (2 * Lsym), lam))
    assert dmu.is_positive and dpow.is_positive
    return {"dmu": dmu, "dmu2L": dpow}
