"""Tools for the derivations of Appendix B: identifying coefficients,
averaging over a uniform unit vector, expectations by linearity under the
moment identities."""

from __future__ import annotations

import sympy as sp

from .symbols import MOMENTS, q, s


def identify(expr, basis: dict, variables) -> dict:
    """The coefficients c_k (free of ``variables``) with ``expr == sum_k c_k
    basis[k]`` identically in ``variables``, found by solving the linear
    equations that matching every monomial gives. Raises ``ValueError`` if
    there is no such combination or it is not unique. Denominators may only
    involve symbols outside the unknowns (e.g. 1/s)."""
    cs = sp.symbols(f"c0:{len(basis)}")
    residual = sp.together(
        sp.expand(expr) - sum(c * b for c, b in zip(cs, basis.values()))
    )
    equations = sp.Poly(sp.expand(sp.numer(residual)), *variables).coeffs()
    solutions = sp.solve(equations, cs, dict=True)
    if len(solutions) != 1 or set(solutions[0]) != set(cs):
        raise ValueError(
            f"{expr} is not a unique combination of {list(basis)}"
        )
    return {name: sp.factor(solutions[0][c]) for name, c in zip(basis, cs)}


def sphere_average(expr, vec, dim: int):
    """E over a vector ``vec`` uniform on the unit sphere of R^dim of a
    polynomial of degree at most 3 in its entries: ``E[v_i v_j] =
    delta_ij/dim`` (E[v v^T] = I/dim) and odd moments 0 (v and -v have the
    same law). Raises ``ValueError`` on degree 4 or more."""
    poly = sp.Poly(sp.expand(expr), *vec)
    out = sp.S.Zero
    for powers, c in poly.terms():
        degree = sum(powers)
        if degree > 3:
            raise ValueError(
                "only moments up to order 3 are used (E[v v^T] = I/dim)"
            )
        if degree == 0:
            out += c
        elif degree == 2 and max(powers) == 2:
            out += c / dim
    return out


def expectation(expr, moments: dict | None = None):
    """E of a per-sample expression in q = a^T S a and s = ||Sa||, by
    linearity: every monomial in (q, s) is replaced by its moment (default
    ``MOMENTS``: 1, q, s^2, s, q/s -> 1, kappa1, kappa2, kappa3, kappa0).
    Raises ``KeyError`` on a monomial without one."""
    moments = MOMENTS if moments is None else moments
    out = sp.S.Zero
    for term in sp.Add.make_args(sp.expand(expr)):
        factors = sp.Mul.make_args(term)
        random = sp.Mul(*[f for f in factors if f.free_symbols & {q, s}])
        if random not in moments:
            raise KeyError(f"no moment for {random} (in {term})")
        out += (
            sp.Mul(*[f for f in factors if not f.free_symbols & {q, s}])
            * moments[random]
        )
    return out


def _sym(name, rows, cols):
    return sp.Matrix(
        rows, cols, lambda i, j: sp.Symbol(f"{name}{i}{j}", real=True)
    )


def block(M, name: str):
    """The d x d block ``name`` ("W12", "V21", ...) of a 2d x 2d matrix."""
    dim = M.shape[0] // 2
    i, j = int(name[1]) - 1, int(name[2]) - 1
    return M[i * dim : (i + 1) * dim, j * dim : (j + 1) * dim]


BLOCKS = ("W11", "W12", "W21", "W22", "V11", "V12", "V21", "V22")


def _factors(expr):
    """(scalar coefficient, list of matrix factors) of a product of matrix
    expressions."""
    if isinstance(expr, sp.MatMul):
        coeff, factors = sp.S.One, []
        for arg in expr.args:
            c, f = _factors(arg)
            coeff, factors = coeff * c, factors + f
        return coeff, factors
    if not getattr(expr, "is_Matrix", False):
        return expr, []
    if isinstance(expr, sp.MatPow) and expr.exp.is_Integer and expr.exp > 0:
        return sp.S.One, [expr.base] * int(expr.exp)
    return sp.S.One, [expr]


def moment_expectation(expr, S, a, moments):
    """E of a sum of terms ``c S^k a a^T S^l`` (a d x d matrix) or ``c a^T
    S^k a`` (a scalar) using only: a is independent of X, E[a a^T] = I/d,
    and E[S^k] = moments[k] I. Returns the scalar m with E[expr] = m I
    (matrix terms) or E[expr] = m (scalar terms). Raises ``ValueError`` on a
    term of another form (e.g. one divided by ||Sa||)."""
    dim = S.shape[0]
    total = sp.S.Zero
    for term in sp.MatAdd.make_args(expr):
        coeff, factors = _factors(term)
        if coeff.has(a) or coeff.has(S):
            raise ValueError(
                f"{term}: its scalar factor depends on the sample"
            )
        if a in factors and a.T in factors:
            i, j = factors.index(a), factors.index(a.T)
            if j == i + 1:  # S^k a a^T S^l -> E[S^(k+l)] E[a a^T]
                k = len(factors) - 2
                outer = factors[:i] + factors[j + 1 :]
                if all(f == S for f in outer) and k in moments:
                    total += coeff * moments[k] / dim
                    continue
            elif i == len(factors) - 1 and j == 0:  # a^T S^k a = tr(S^k a a^T)
                k = len(factors) - 2
                if all(f == S for f in factors[1:-1]) and k in moments:
                    total += (
                        coeff * moments[k]
                    )  # tr(E[S^k] E[a a^T]) = tr(m_k I/d) = m_k
                    continue
        raise ValueError(
            f"{term} is not of the form c S^k a a^T S^l or c a^T S^k a "
            "with a known moment E[S^k]"
        )
    return sp.factor(total)
