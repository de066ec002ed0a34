"""Appendices D and E: looping a learned layer at inference (Theorems 4.6
and 4.7).

The eigen-expansion of ``M^L a`` in a symbolic orthonormal eigenbasis, the
exact angular error (D.1), certificates for the two bounds of Theorem 4.6,
the unnormalised model and the contraction factor R(gamma), and its limit
(Appendix E).

The eigenbasis is the columns of a symbolic rotation in the Cayley
parametrisation ``O = (I - A)(I + A)^{-1}``, A skew-symmetric with three
free symbols: every rotation without the eigenvalue -1, a dense subset of
SO(3). The identities derived are rational identities in the three
parameters, so they hold on all of SO(3) by continuity, and flipping the
sign of a column (a reflection) only flips the sign of the matching c_i.
"""

from __future__ import annotations

import sympy as sp

from .common import check, gamma
from .eigenbasis import (
    GENS,
    K_SYM,
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

# --- D.1: the eigen-expansion of M^L a and the exact angular error


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
        check(
            coords[i] == gen[C[i]] * (1 + t * gen[LAMBDAS[i]]) ** L,
            f"Appendix D, step 1: O^T M^L a = c_i mu_i^L at i = {i + 1}",
        )
    mu = [1 + shift * lam for lam in LAMBDAS]
    diag_L = (sp.eye(3) + shift * sp.diag(*LAMBDAS)) ** Lsym
    check(
        all(_zero(diag_L[i, i] - mu[i] ** Lsym) for i in range(3)),
        "Appendix D, step 1: (I + shift Lambda)^L = diag(mu_i^L), symbolic L",
    )
    return {
        "coords": sp.Matrix([sp.factor(q.as_expr(*GENS)) for q in coords]),
        "diag_L": sp.Matrix([diag_L[i, i] for i in range(3)]),
    }


def _projections(U, r: int, power: int):
    """For u = U/n0^power and Z = span(v_1..v_r): the numerators of ||u||^2,
    ||Proj u||^2 and ||u - Proj u||^2 after exact division by the matching
    powers of n0; checks that the projector ``Q diag(1..1, 0..0) Q^T`` is
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
    check(
        PnPn == [[n0**2 * x for x in row] for row in Pn],
        f"Appendix D: the projector onto span(v_1..v_{r}) is idempotent",
    )
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
    check(
        norm2 == sum(c[i] ** 2 * m[i] ** 2 for i in range(3)),
        "(D.1): ||u||^2 = sum_i c_i^2 mu_i^{2L}",
    )
    check(
        perp2 == sum(c[i] ** 2 * m[i] ** 2 for i in range(r, 3)),
        f"(D.1): ||u - Proj u||^2 = sum_{{i>{r}}} c_i^2 mu_i^{{2L}}",
    )
    check(
        norm2 - proj2 == perp2,
        "(D.1): 1 - cos^2 phi = Dist^2(y, Z)",
    )
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
    Proj u||^2`` and ``||u||^2``; checked equal to ``sum_{i>r} c_i^2
    mu_i^{2L}`` and ``sum_i c_i^2 mu_i^{2L}``."""
    R, gen, Qn, n0 = frame()
    U, Z = shifted_power(L, shift)
    z = [exact(x, n0 ** (2 * L + 2)) for x in Z]  # coordinates Q^T u
    U1 = matvec(
        Qn, z
    )  # u = Q (Q^T u) = U1/n0, the same vector as U/n0^(2L+1):
    check(
        [n0 ** (2 * L) * x for x in U1] == U,
        "Appendix A: u = O (O^T u) gives back M^L a",
    )
    norm2, _, perp2 = _projections(U1, r, 1)
    t = gen[shift]
    w = [
        gen[C[i]] ** 2 * (1 + t * gen[LAMBDAS[i]]) ** (2 * L) for i in range(3)
    ]
    check(
        norm2 == sum(w) and perp2 == sum(w[r:]),
        f"Appendix A: ||u||^2, ||u - Proj u||^2 in the eigenbasis (L = {L})",
    )
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
    check(
        dmu.is_positive and dpow.is_positive,
        "Appendix D, step 3: mu and mu^{2L} increase in lambda",
    )
    return {"dmu": dmu, "dmu2L": dpow}


# --- D, step 3: the certificates of Theorem 4.6's two bounds


def bound_certificates(dim: int = 3, r: int = 1) -> dict[str, sp.Expr]:
    """Appendix D, step 3: the two bounds of Theorem 4.6 as polynomial
    inequalities.

    With sigma_i = c_i^2 (sum 1: a is a unit vector), xi_i = mu_i^{2L}
    ordered xi_1 = ... = xi_r >= xi_{r+1} >= ... >= xi_d > 0, num =
    sum_{i>r} sigma_i xi_i, den = sum_i sigma_i xi_i and sin^2 = num/den
    (D.1), ||a_perp||^2 = sum_{i>r} sigma_i, ||a_Z||^2 = sum_{i<=r} sigma_i,
    R^{2L} = xi_{r+1}/xi_1 (Greek letters, so that s, x, N, D keep their
    meanings elsewhere in the book):

    - upper: ``(||a_perp||^2/||a_Z||^2) R^{2L} - sin^2`` has the sign of
      ``||a_perp||^2 xi_{r+1} den - num xi_1 ||a_Z||^2``;
    - lower: ``sin^2 - sigma_{r+1} R^{2L}`` has the sign of ``num xi_1 -
      sigma_{r+1} xi_{r+1} den``, equal (since sum sigma_i = 1) to the
      homogeneous ``Lw = num xi_1 sum_i sigma_i - sigma_{r+1} xi_{r+1}
      den``.

    Writing the ordered xi through non-negative gaps (xi_d = g_d, xi_i =
    xi_{i+1} + g_i) turns U and Lw into polynomials in non-negative
    variables; the certificate is that every coefficient is >= 0 (checked).
    Returns U and Lw in the gap variables."""
    if not 1 <= r < dim:
        raise ValueError(f"need 1 <= r < dim, got r={r}, dim={dim}")
    s = sp.symbols(f"sigma1:{dim + 1}", nonnegative=True)
    g = sp.symbols(f"g{r}:{dim + 1}", nonnegative=True)  # g_r, ..., g_dim
    gap = dict(zip(range(r, dim + 1), g))
    x = [None] * (dim + 1)  # xi, 1-based
    x[dim] = gap[dim]
    for i in range(dim - 1, r - 1, -1):
        x[i] = x[i + 1] + gap[i]
    for i in range(1, r):
        x[i] = x[r]  # the top eigenvalue has multiplicity r
    num = sum(s[i - 1] * x[i] for i in range(r + 1, dim + 1))
    den = sum(s[i - 1] * x[i] for i in range(1, dim + 1))
    perp2 = sum(s[i - 1] for i in range(r + 1, dim + 1))
    top2 = sum(s[i - 1] for i in range(1, r + 1))
    U = sp.expand(perp2 * x[r + 1] * den - num * x[1] * top2)
    Lw = sp.expand(num * x[1] * sum(s) - s[r] * x[r + 1] * den)
    for name, expr in (("upper", U), ("lower", Lw)):
        coeffs = sp.Poly(expr, *s, *g).coeffs()
        check(
            expr != 0 and all(c >= 0 for c in coeffs),
            f"Theorem 4.6 (d = {dim}, r = {r}): {name} bound certificate",
        )
    return {
        "upper": U,
        "lower": Lw,
        "variables": (s, g),
        "num": num,
        "den": den,
        "xi1": x[1],
        "xi_next": x[r + 1],
        "perp2": perp2,
        "top2": top2,
    }


def nonnegative_certificate(expr, variables) -> bool:
    """True when ``expr`` is a polynomial in ``variables`` with no negative
    coefficient."""
    return all(c >= 0 for c in sp.Poly(sp.expand(expr), *variables).coeffs())


# --- E: the normalised power step and the contraction factor R(gamma)


def layer_is_normalised_power() -> sp.Expr:
    """Appendix D, step 4 (and step 1's LN): rescaling commutes with the
    linear map M, so ``LN(M LN(u)) = LN(M u)``: looping with LN after every
    loop gives ``M^L a/||M^L a||``, the direction of the unnormalised ``M^L
    a``. Checked for a symbolic 2 x 2 M and u: returns the difference
    (checked 0)."""
    M = sp.Matrix(2, 2, sp.symbols("M11 M12 M21 M22", real=True))
    u = sp.Matrix(sp.symbols("u1 u2", real=True))

    def ln(z):
        return z / sp.sqrt(z.dot(z))

    diff = (ln(M * ln(u)) - ln(M * u)).applyfunc(
        lambda e: sp.simplify(sp.powsimp(e, force=True))
    )
    check(diff == sp.zeros(2, 1), "Appendix D, step 4: LN(M LN(u)) = LN(M u)")
    return diff


def scale_invariance() -> sp.Expr:
    """Appendix D, step 4: the angle to Z does not see the scale: with u = O
    c and any k != 0, ``Dist^2(k u/||k u||, Z) = Dist^2(u/||u||, Z)``
    (symbolic eigenbasis, r = 1): both the numerator and the denominator of
    the scaled vector are k^2 times those of u (checked). Returns Dist^2 of
    the scaled vector with the common k^2 cancelled."""
    R, gen, Qn, _ = frame()
    k = gen[K_SYM]
    U = matvec(Qn, [gen[x] for x in C])
    norm2, _, perp2 = _projections(U, 1, 1)
    norm2k, _, perp2k = _projections([k * x for x in U], 1, 1)
    check(
        norm2k == k**2 * norm2 and perp2k == k**2 * perp2,
        "Appendix D, step 4: scaling u by k scales both terms by k^2",
    )
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
    check(
        _zero(excess - gap / (l1 * (1 + g * l1))) and excess.is_positive,
        "Appendix E: R - l/lambda_1 = (lambda_1 - l)/(lambda_1 mu_1) > 0",
    )
    check(
        _zero(dR + gap / (1 + g * l1) ** 2) and dR.is_negative,
        "Appendix E: dR/dgamma = -(lambda_1 - l)/(1 + gamma lambda_1)^2 < 0",
    )
    check(
        _zero(lim - lnext / l1) and _zero(limL - (lnext / l1) ** Lsym),
        "Appendix E: R -> l/lambda_1 and R^L -> (l/lambda_1)^L",
    )
    return {
        "R": R,
        "excess": excess,
        "dR": dR,
        "limit": lim,
        "limit_L": limL,
        "lambda_next": lnext,
    }
