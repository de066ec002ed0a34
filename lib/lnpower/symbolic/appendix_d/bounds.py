"""Theorem 4.6: certificates for its two bounds (polynomials with
nonnegative coefficients)."""

from __future__ import annotations

import sympy as sp


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
    variables; the certificate is that every coefficient is >= 0 (asserted).
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
        assert expr != 0 and all(c >= 0 for c in coeffs), name
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
