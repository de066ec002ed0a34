"""Appendix B.2.1 and B.2.2: the loss landscapes expanded from symbolic
vectors, their minimisers and irreducible losses, the Cauchy-Schwarz step,
the degenerate case and the moments."""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..common import d, gamma, is_zero, k1, k2, k3, n
from .moments import _sym, expectation, identify, sphere_average
from .symbols import TARGETS, k0, q, s


@cache
def sample_loss(target: str, dim: int = 3) -> dict:
    """The per-sample loss ||a + gamma S a - t||^2 for explicit symbolic a
    and symmetric S (dim = 3), t = S a/s (s a positive symbol standing for
    ||Sa||) or t = S a, expanded as a polynomial in gamma. Each coefficient
    is identified (:func:`identify`) as a combination of the per-sample
    scalars ||a||^2, q = a^T S a, ||Sa||^2 and their quotients by s, s^2;
    then ||a||^2 = 1 and ||Sa||^2 = s^2 give the loss in (gamma, q, s).
    Returns the coefficients and that loss."""
    a = _sym("a", dim, 1)
    S = sp.Matrix(
        dim, dim, lambda i, j: sp.Symbol(f"S{min(i, j)}{max(i, j)}", real=True)
    )
    if target == "normalized":
        t = S * a / s
    elif target == "unnormalized":
        t = S * a
    else:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    r = a + gamma * S * a - t
    per_sample = sp.Poly(sp.expand((r.T * r)[0, 0]), gamma)
    norm_a, qa, norm_Sa = (
        (a.T * a)[0, 0],
        (a.T * S * a)[0, 0],
        ((S * a).T * (S * a))[0, 0],
    )
    basis = {
        "||a||^2": norm_a,
        "q": qa,
        "||Sa||^2": norm_Sa,
        "q/s": qa / s,
        "||Sa||^2/s": norm_Sa / s,
        "||Sa||^2/s^2": norm_Sa / s**2,
    }
    scalars = {
        "||a||^2": 1,
        "q": q,
        "||Sa||^2": s**2,
        "q/s": q / s,
        "||Sa||^2/s": s,
        "||Sa||^2/s^2": 1,
    }
    variables = list(a) + sorted(S.free_symbols, key=str) + [s]
    coefficients, loss = {}, sp.S.Zero
    for (power,), c in per_sample.terms():
        found = identify(c, basis, variables)
        coefficients[power] = {k: v for k, v in found.items() if v != 0}
        loss += gamma**power * sum(v * scalars[k] for k, v in found.items())
    return {"coefficients": coefficients, "loss": sp.expand(loss)}


def landscape(target: str) -> dict[str, sp.Expr]:
    """Appendix B.2.1/B.2.2: L(gamma) = E[per-sample loss] by linearity
    (:func:`expectation`), gamma* from L'(gamma*) = 0, L* = L(gamma*), F =
    L'/d, and the expansion of L about gamma* (coefficients of delta^0,
    delta^1, delta^2 in L(gamma* + delta)). Asserts the paper's gamma*, L*
    and ``L = L* + kappa2 (gamma - gamma*)^2``."""
    per_sample = sample_loss(target)["loss"]
    L = expectation(per_sample)
    (g_star,) = sp.solve(sp.diff(L, gamma), gamma)
    L_min = sp.factor(L.subs(gamma, g_star))
    delta = sp.Symbol("delta", real=True)
    taylor = sp.Poly(
        sp.expand(L.subs(gamma, g_star + delta)), delta
    ).all_coeffs()[::-1]
    assert (
        is_zero(taylor[1])
        and is_zero(taylor[2] - k2)
        and is_zero(taylor[0] - L_min)
    )
    if target == "normalized":
        paper = ((k3 - k1) / k2, 2 - 2 * k0 - (k3 - k1) ** 2 / k2)
    else:
        paper = (1 - k1 / k2, 1 - k1**2 / k2)
    assert is_zero(g_star - paper[0]) and is_zero(L_min - paper[1])
    Fg = sp.factor(sp.diff(L, gamma) / d)
    assert is_zero(Fg - 2 * k2 / d * (gamma - g_star))
    return {
        "per_sample": per_sample,
        "L": L,
        "gamma_star": g_star,
        "L_star": L_min,
        "taylor": [sp.factor(c) for c in taylor],
        "F": Fg,
    }


def no_ln_landscape(target: str) -> dict[str, sp.Expr]:
    """L(gamma), gamma*, L(gamma*) and F = L'/d of the layer without LN
    (Appendix B.2.1-2), derived by :func:`landscape` (kappa0 = E[a^T S
    a/||Sa||] in the normalised case)."""
    out = landscape(target)
    return {
        "L": out["L"],
        "gamma_star": out["gamma_star"],
        "L_star": out["L_star"],
        "F": out["F"],
    }


def cauchy_schwarz_step() -> dict[str, sp.Expr]:
    """Appendix B.2.1, the algebra after Cauchy-Schwarz: ``(2 - 2q/s) - (s -
    q)^2/s^2`` expanded, which is ``1 - q^2/s^2``; and the Cauchy-Schwarz
    pairing ``E[s - q] = E[s * (s - q)/s]`` that gives ``(E[s - q])^2 <=
    E[s^2] E[(s - q)^2/s^2]`` (the expansion is derived; the pairing is a
    restatement checked)."""
    middle = sp.expand((s - q) ** 2 / s**2)
    result = sp.expand((2 - 2 * q / s) - middle)
    assert is_zero(result - (1 - q**2 / s**2))
    assert is_zero(s * ((s - q) / s) - (s - q))
    return {"expanded_square": middle, "difference": result}


def gram_identity(dim: int = 3, cols: int = 3) -> dict[str, sp.Expr]:
    """Appendix B.2.2, degenerate case: for explicit symbolic columns x_j of
    X, ``tr(S^2) - tr(S) - sum_{i != j} (x_i^T x_j)^2`` and ``tr(S) - cols``
    reduced modulo the unit-norm relations ||x_j||^2 = 1 (A1) (remainder of
    division by their Groebner basis): both remainders are 0. Also
    E_a||Sa||^2 = tr(S^2)/dim and E_a[a^T S a] = tr(S)/dim
    (:func:`sphere_average`)."""
    X, a = _sym("x", dim, cols), _sym("a", dim, 1)
    S = X * X.T
    relations = [
        sum(X[k, j] ** 2 for k in range(dim)) - 1 for j in range(cols)
    ]
    basis = sp.groebner(relations, *list(X), order="grevlex")
    off = sum(
        (X[:, i].T * X[:, j])[0, 0] ** 2
        for i in range(cols)
        for j in range(cols)
        if i != j
    )
    rem_S2 = basis.reduce(sp.expand((S * S).trace() - S.trace() - off))[1]
    rem_S = basis.reduce(sp.expand(S.trace() - cols))[1]
    avg_S2 = sp.expand(
        sphere_average(((S * a).T * (S * a))[0, 0], a, dim)
        - (S * S).trace() / dim
    )
    avg_S = sp.expand(
        sphere_average((a.T * S * a)[0, 0], a, dim) - S.trace() / dim
    )
    assert rem_S2 == 0 and rem_S == 0 and avg_S2 == 0 and avg_S == 0
    return {
        "tr_S2": rem_S2,
        "tr_S": rem_S,
        "average_S2": avg_S2,
        "average_S": avg_S,
    }


def cayley(dim: int) -> tuple[sp.Matrix, sp.Expr]:
    """A symbolic rotation O = (I - A)^-1 (I + A) (Cayley transform of a
    symbolic skew matrix A) as ``(Num, delta)`` with polynomial entries, O =
    Num/delta: Num = adj(I - A)(I + A), delta = det(I - A). Asserts
    O^T O = I, i.e. Num^T Num = delta^2 I."""
    K = sp.zeros(dim, dim)
    for i in range(dim):
        for j in range(i + 1, dim):
            K[i, j] = sp.Symbol(f"k{i}{j}", real=True)
            K[j, i] = -K[i, j]
    N = ((sp.eye(dim) - K).adjugate() * (sp.eye(dim) + K)).applyfunc(sp.expand)
    delta = sp.expand((sp.eye(dim) - K).det())
    assert (N.T * N - delta**2 * sp.eye(dim)).applyfunc(sp.expand) == sp.zeros(
        dim, dim
    )
    return N, delta


def _average_over_a(S_num, delta, dim: int):
    """E_a[a^T S a] and E_a||Sa||^2 for S = S_num/delta^2
    (:func:`sphere_average`)."""
    a = _sym("a", dim, 1)
    m1 = sphere_average((a.T * S_num * a)[0, 0], a, dim)
    m2 = sphere_average(((S_num * a).T * (S_num * a))[0, 0], a, dim)
    return sp.cancel(m1 / delta**2), sp.cancel(m2 / delta**4)


def orthonormal_case(dim: int = 3, cols: int = 2) -> dict[str, sp.Expr]:
    """Appendix B.2.2, the degenerate case: X = R [e_1 ... e_cols] with R a
    symbolic rotation (orthonormal columns, cols <= dim). Then S^2 = S,
    kappa1 = kappa2 = cols/dim (via E_a[a^T S a] = tr(S)/dim) and the
    derived gamma2* = 1 - kappa1/kappa2 is 0."""
    N, delta = cayley(dim)
    X = N[
        :, :cols
    ]  # X = R[:, :cols] = N[:, :cols]/delta, so S = X X^T/delta^2
    P = X * X.T
    assert (P * P - delta**2 * P).applyfunc(sp.expand) == sp.zeros(
        dim, dim
    )  # S^2 = S
    kappa1, kappa2 = _average_over_a(P, delta, dim)
    g_star = landscape("unnormalized")["gamma_star"].subs(
        {k1: kappa1, k2: kappa2}
    )
    assert kappa1 == kappa2 == sp.Rational(cols, dim) and g_star == 0
    return {"kappa1": kappa1, "kappa2": kappa2, "gamma_star": g_star}


def kappas_sphere() -> dict[str, sp.Expr]:
    """Task 1 moments: kappa1 derived, kappa2 with one moment typed in and
    checked at dim = 3 (a restatement checked). kappa1 = E[a^T S a] =
    E tr(S)/d (E[a a^T] = I/d) with tr S = sum_j ||x_j||^2 = n (A1).
    kappa2 = E||Sa||^2 = E tr(S^2)/d with tr(S^2) = n + sum_{i != j}
    (x_i^T x_j)^2
    (:func:`gram_identity`) and, for independent uniform unit columns,
    E[(x_i^T x_j)^2] = tr(E[x_i x_i^T] E[x_j x_j^T]) = tr(I/d^2) = 1/d
    (checked at dim = 3 with explicit vectors), over n(n - 1) ordered pairs."""
    gram_identity()
    i, j = sp.symbols("i j", integer=True, positive=True)
    x, y = _sym("x", 3, 1), _sym("y", 3, 1)
    pair = sphere_average(sphere_average(((x.T * y)[0, 0]) ** 2, x, 3), y, 3)
    c2 = sp.Trace(
        sp.Identity(d) / d * sp.Identity(d) / d
    ).doit()  # E[(x_i^T x_j)^2]
    assert pair == sp.Rational(1, 3) and is_zero(c2.subs(d, 3) - pair)
    ordered_pairs = (
        sp.Sum(1, (i, 1, n), (j, 1, n)).doit() - sp.Sum(1, (i, 1, n)).doit()
    )
    tr_S = sp.Sum(1, (j, 1, n)).doit()  # sum_j ||x_j||^2
    kappa1 = tr_S / d
    kappa2 = sp.factor((tr_S + ordered_pairs * c2) / d)
    assert is_zero(kappa2 - n * (n + d - 1) / d**2)
    return {"kappa1": kappa1, "kappa2": kappa2, "pair_moment": c2}


def kappas_rotated(m=(2, 1, 1)) -> dict[str, sp.Expr]:
    """Task 2 moments, derived for explicit multiplicities m (len(m) <= 4;
    the symbolic rotation grows fast): S = O diag(m) O^T with a symbolic
    rotation O, so that kappa1 = E_a[a^T S a] = tr(S)/d = n/d and kappa2 =
    E_a||Sa||^2 = tr(S^2)/d = sum m_i^2/d for every rotation."""
    dim = len(m)
    N, delta = cayley(dim)
    kappa1, kappa2 = _average_over_a(N * sp.diag(*m) * N.T, delta, dim)
    assert kappa1 == sp.Rational(sum(m), dim)
    assert kappa2 == sp.Rational(sum(mi**2 for mi in m), dim)
    return {"kappa1": kappa1, "kappa2": kappa2}
