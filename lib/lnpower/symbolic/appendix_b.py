"""Appendix B: the layer without LN (Theorem 4.2), derived step by step with
SymPy.

B.1: the per-sample gradients of the layer (4.3) with respect to every
block, the paper's gradient formulas, the population gradient under the
moment identities and the scalar dynamics. B.2: the loss landscapes expanded
from explicit symbolic vectors, their minimisers and irreducible losses, the
Cauchy-Schwarz step, the degenerate case and the moments kappa1, kappa2.
B.2.3: the gamma/Q/D recursions, the first iteration, the descent lemma and
the contraction.

Every function derives its result from the definitions (differentiating,
expanding, solving linear systems for unknown coefficients) and checks what
the paper states about it (a
:class:`~lnpower.symbolic.common.DerivationFailed` if a step fails; ``python
-O`` does not remove these checks). Notation: ``q = a^T S a``, ``s = ||S
a||``, ``kappa0 = E[q/s]``; the paper's ``S_t = alpha~^2 + beta~^2`` is
``Q`` here (S is the data matrix), ``D = beta~^2 - alpha~^2``."""

from __future__ import annotations

import math
from functools import cache

import sympy as sp

from ..tasks import POWER_STEP_TARGETS
from .common import (
    WEIGHT_BLOCKS,
    F,
    alpha,
    beta,
    check,
    d,
    eta,
    gamma,
    is_zero,
    k1,
    k2,
    k3,
    n,
)

# --- B: the symbols and the moments of the per-sample scalars

k0 = sp.Symbol("kappa0", positive=True)  # E[a^T S a/||Sa||]
q, s = sp.symbols("q s", positive=True)  # per sample: a^T S a and ||Sa||
Q, D = sp.symbols(
    "Q D", real=True
)  # alpha~^2 + beta~^2 (the paper's S_t), beta~^2 - alpha~^2
beta0, gamma_star, L_star = sp.symbols(
    "beta0 gamma_star L_star", positive=True
)

# E of the per-sample scalars (by linearity): the moments of Appendix B.2
MOMENTS = {sp.S.One: sp.S.One, q: k1, s**2: k2, s: k3, q / s: k0}


# --- B: the tools: identify, sphere averages, expectations


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


# --- B.1: the reduction to a scalar dynamic


@cache
def layer(dim: int = 2, cols: int = 2) -> dict:
    """The layer without LN (4.3) with every entry symbolic: X (dim x cols),
    a, a target t, W and V (2dim x 2dim). Returns the symbols, ``S = X
    X^T``, the output ``y = [E + V E E^T W E]_{d+1:2d, n+1}`` and the
    per-sample loss ``||y - t||^2``."""
    X, a, t = _sym("x", dim, cols), _sym("a", dim, 1), _sym("t", dim, 1)
    W, V = _sym("w", 2 * dim, 2 * dim), _sym("v", 2 * dim, 2 * dim)
    E = sp.BlockMatrix(
        [[X, sp.zeros(dim, 1)], [sp.zeros(dim, cols), a]]
    ).as_explicit()
    y = (E + V * E * E.T * W * E)[dim:, cols]
    return {
        "X": X,
        "a": a,
        "t": t,
        "W": W,
        "V": V,
        "S": X * X.T,
        "y": y,
        "loss": ((y - t).T * (y - t))[0, 0],
    }


def structured_point(dim: int = 2, cols: int = 2, w=alpha, v=beta) -> dict:
    """Substitution putting the layer at (4.2): W12 = w I, V21 = v I, every
    other entry 0."""
    lay = layer(dim, cols)
    point = {}
    for M, name, value in ((lay["W"], "W12", w), (lay["V"], "V21", v)):
        for i in range(2 * dim):
            for j in range(2 * dim):
                diag = (i // dim, j // dim) == (
                    int(name[1]) - 1,
                    int(name[2]) - 1,
                ) and i % dim == j % dim
                point[M[i, j]] = value if diag else 0
    return point


def gradients(
    point: dict, dim: int = 2, cols: int = 2
) -> dict[str, sp.Matrix]:
    """Per-sample gradient of the loss with respect to each block, d
    loss/d(entry) by SymPy, evaluated at ``point`` (a substitution for the
    entries of W and V)."""
    lay = layer(dim, cols)
    out = {}
    for name in WEIGHT_BLOCKS:
        B = block(lay[name[0]], name)
        out[name] = B.applyfunc(
            lambda e: sp.expand(sp.diff(lay["loss"], e).xreplace(point))
        )
    return out


@cache
def _structured_gradients(dim: int, cols: int) -> dict[str, sp.Matrix]:
    return gradients(structured_point(dim, cols), dim, cols)


def block_gradients(dim: int = 2, cols: int = 2) -> dict[str, sp.Matrix]:
    """Appendix B.1, vanishing blocks: the per-sample gradients at the
    structured point W12 = alpha I, V21 = beta I (all else 0), for symbolic
    X, a and target t. Checks that all but the W12 and V21 gradients are
    identically 0."""
    grads = _structured_gradients(dim, cols)
    for name, G in grads.items():
        check(
            (G == sp.zeros(dim, dim)) == (name not in ("W12", "V21")),
            f"Appendix B.1: only W12, V21 have nonzero gradients ({name})",
        )
    return grads


def paper_gradient_formulas(
    dim: int = 2, cols: int = 2
) -> dict[str, sp.Matrix]:
    """The paper's gradient formulas (Appendix B.1) in the symbols of
    :func:`layer`: ``2 S V21^T (y - t) a^T``, ``2 (y - t)(S W12 a)^T``, ``2
    a a^T V22^T (y - t) a^T``, ``2 (y - t)(a a^T W22 a)^T`` for W12, V21,
    W22, V22 (per sample)."""
    lay = layer(dim, cols)
    S, a, r = lay["S"], lay["a"], lay["y"] - lay["t"]
    W12, V21 = block(lay["W"], "W12"), block(lay["V"], "V21")
    W22, V22 = block(lay["W"], "W22"), block(lay["V"], "V22")
    return {
        "W12": 2 * S * V21.T * r * a.T,
        "V21": 2 * r * (S * W12 * a).T,
        "W22": 2 * a * a.T * V22.T * r * a.T,
        "V22": 2 * r * (a * a.T * W22 * a).T,
    }


def gradient_formulas(
    dim: int = 2, cols: int = 2
) -> dict[str, tuple[sp.Matrix, sp.Matrix]]:
    """SymPy's per-sample derivatives with respect to the entries of W12,
    V21, W22, V22 at a general point (every entry of W and V symbolic) next
    to the paper's formulas; checks they agree. Returns ``{block:
    (derivative, formula)}``."""
    lay = layer(dim, cols)
    out = {}
    for name, formula in paper_gradient_formulas(dim, cols).items():
        B = block(lay[name[0]], name)
        derived = B.applyfunc(lambda e: sp.diff(lay["loss"], e))
        check(
            (derived - formula).applyfunc(sp.expand) == sp.zeros(dim, dim),
            f"Appendix B.1: the paper's gradient formula for {name}",
        )
        out[name] = (derived, formula)
    return out


def population_gradient(target: str = "unnormalized") -> dict[str, sp.Expr]:
    """Appendix B.1, isotropy, for general d with matrix symbols: at W12 =
    alpha I, V21 = beta I, the per-sample gradients 2 S V21^T (y - t) a^T
    and 2 (y - t)(S W12 a)^T (t = S a) expanded, and their expectations from
    E[a a^T] = I/d, E[S] = kappa1 I, E[S^2] = kappa2 I (a independent of X;
    (A1)-(A2)): both are multiples of I, ``dL/dW12 = c_W I`` and ``dL/dV21 =
    c_V I``. Also the population loss L(gamma) by the same rules, and
    checks ``c_W = beta L'(gamma)/d``, ``c_V = alpha L'(gamma)/d``. The
    normalised target raises ``ValueError``: Sa/||Sa|| is not a polynomial
    in S."""
    S = sp.MatrixSymbol("S", d, d)
    a = sp.MatrixSymbol("a", d, 1)
    I = sp.Identity(d)
    if target == "unnormalized":
        t = S * a
    elif target == "normalized":
        t = S * a / sp.sqrt(sp.Trace(a.T * S * S * a))  # ||Sa||
    else:
        raise ValueError(
            f"target must be one of {POWER_STEP_TARGETS}, got {target!r}"
        )
    W12, V21 = alpha * I, beta * I
    r = a + V21 * S * W12 * a - t

    def tidy(M):  # S = X X^T is symmetric
        return sp.expand(M.doit()).xreplace({S.T: S})

    moments = {0: sp.S.One, 1: k1, 2: k2}
    per_sample = {
        "W12": tidy(2 * S * V21.T * r * a.T),
        "V21": tidy(2 * r * (S * W12 * a).T),
        "loss": tidy(r.T * r),
    }
    out = {
        name: moment_expectation(expr, S, a, moments)
        for name, expr in per_sample.items()
    }
    L = sp.expand(out["loss"].subs(alpha, gamma / beta))
    check(
        not L.has(alpha) and not L.has(beta),
        "Appendix B.1: L is a function of gamma = alpha beta alone",
    )
    dL = sp.diff(L, gamma).subs(gamma, alpha * beta)
    check(
        is_zero(out["W12"] - beta * dL / d)
        and is_zero(out["V21"] - alpha * dL / d),
        "Appendix B.1: c_W = beta L'(gamma)/d and c_V = alpha L'(gamma)/d",
    )
    return {
        "per_sample": per_sample,
        "W12": out["W12"],
        "V21": out["V21"],
        "L": L,
    }


def scalar_dynamics(dim: int = 2, cols: int = 2) -> dict[str, sp.Expr]:
    """Appendix B.1, the reduction: at W12 = alpha I, V21 = beta I and for
    ANY target t, the per-sample gradients satisfy ``tr(d loss/d W12) = beta
    d loss/d gamma`` and ``tr(d loss/d V21) = alpha d loss/d gamma`` with
    loss(gamma) = ||a + gamma S a - t||^2, gamma = alpha beta (both sides by
    SymPy). With the isotropy dL/dW12 = (tr/d) I, one step of gradient
    descent W12 - eta dL/dW12 is ``alpha - eta beta F`` with F = L'(gamma)/d
    (and symmetrically for beta). Returns the two identities' residuals (0)
    and the updates."""
    lay = layer(dim, cols)
    grads = _structured_gradients(dim, cols)
    S, a, t = lay["S"], lay["a"], lay["t"]
    r = a + gamma * S * a - t
    dloss = sp.diff(((r.T * r)[0, 0]), gamma).subs(gamma, alpha * beta)
    res_W = sp.expand(grads["W12"].trace() - beta * dloss)
    res_V = sp.expand(grads["V21"].trace() - alpha * dloss)
    check(
        res_W == 0 and res_V == 0,
        "Appendix B.1: tr dL/dW12 = beta L', tr dL/dV21 = alpha L' (any t)",
    )
    Lp = sp.Symbol("Lprime", real=True)  # L'(gamma) of the population loss
    G_W, G_V = (beta * Lp / d) * sp.eye(dim), (alpha * Lp / d) * sp.eye(dim)
    W_next, V_next = (
        alpha * sp.eye(dim) - eta * G_W,
        beta * sp.eye(dim) - eta * G_V,
    )
    return {
        "residual_W12": res_W,
        "residual_V21": res_V,
        "alpha": W_next[0, 0].subs(Lp, F * d),
        "beta": V_next[0, 0].subs(Lp, F * d),
    }


# --- B.2.1 and B.2.2: the loss landscapes and the moments


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
        raise ValueError(
            f"target must be one of {POWER_STEP_TARGETS}, got {target!r}"
        )
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
    delta^1, delta^2 in L(gamma* + delta)). Checks the paper's gamma*, L*
    and ``L = L* + kappa2 (gamma - gamma*)^2``."""
    per_sample = sample_loss(target)["loss"]
    L = expectation(per_sample)
    (g_star,) = sp.solve(sp.diff(L, gamma), gamma)
    L_min = sp.factor(L.subs(gamma, g_star))
    delta = sp.Symbol("delta", real=True)
    taylor = sp.Poly(
        sp.expand(L.subs(gamma, g_star + delta)), delta
    ).all_coeffs()[::-1]
    check(
        is_zero(taylor[1])
        and is_zero(taylor[2] - k2)
        and is_zero(taylor[0] - L_min),
        f"Appendix B.2 ({target}): L = L* + kappa2 (gamma - gamma*)^2",
    )
    if target == "normalized":
        paper = ((k3 - k1) / k2, 2 - 2 * k0 - (k3 - k1) ** 2 / k2)
    else:
        paper = (1 - k1 / k2, 1 - k1**2 / k2)
    check(
        is_zero(g_star - paper[0]) and is_zero(L_min - paper[1]),
        f"Appendix B.2 ({target}): the paper's gamma* and L*",
    )
    Fg = sp.factor(sp.diff(L, gamma) / d)
    check(
        is_zero(Fg - 2 * k2 / d * (gamma - g_star)),
        f"Appendix B.2 ({target}): F = (2 kappa2/d)(gamma - gamma*)",
    )
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
    check(
        is_zero(result - (1 - q**2 / s**2)),
        "Appendix B.2.1: (2 - 2q/s) - (s - q)^2/s^2 = 1 - q^2/s^2",
    )
    check(
        is_zero(s * ((s - q) / s) - (s - q)),
        "Appendix B.2.1: the Cauchy-Schwarz pairing s - q = s (s - q)/s",
    )
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
    check(
        rem_S2 == 0 and rem_S == 0,
        "Appendix B.2.2: tr(S^2), tr(S) reduce modulo ||x_j||^2 = 1",
    )
    check(
        avg_S2 == 0 and avg_S == 0,
        "Appendix B.2.2: E_a||Sa||^2 = tr(S^2)/d, E_a[a^T S a] = tr(S)/d",
    )
    return {
        "tr_S2": rem_S2,
        "tr_S": rem_S,
        "average_S2": avg_S2,
        "average_S": avg_S,
    }


def cayley(dim: int) -> tuple[sp.Matrix, sp.Expr]:
    """A symbolic rotation O = (I - A)^-1 (I + A) (Cayley transform of a
    symbolic skew matrix A) as ``(Num, delta)`` with polynomial entries, O =
    Num/delta: Num = adj(I - A)(I + A), delta = det(I - A). Checks
    O^T O = I, i.e. Num^T Num = delta^2 I."""
    K = sp.zeros(dim, dim)
    for i in range(dim):
        for j in range(i + 1, dim):
            K[i, j] = sp.Symbol(f"k{i}{j}", real=True)
            K[j, i] = -K[i, j]
    N = ((sp.eye(dim) - K).adjugate() * (sp.eye(dim) + K)).applyfunc(sp.expand)
    delta = sp.expand((sp.eye(dim) - K).det())
    check(
        (N.T * N - delta**2 * sp.eye(dim)).applyfunc(sp.expand)
        == sp.zeros(dim, dim),
        f"Appendix B.2.2: the Cayley rotation is orthogonal (dim = {dim})",
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
    check(
        (P * P - delta**2 * P).applyfunc(sp.expand) == sp.zeros(dim, dim),
        "Appendix B.2.2: S^2 = S for orthonormal columns",
    )
    kappa1, kappa2 = _average_over_a(P, delta, dim)
    g_star = landscape("unnormalized")["gamma_star"].subs(
        {k1: kappa1, k2: kappa2}
    )
    check(
        kappa1 == kappa2 == sp.Rational(cols, dim) and g_star == 0,
        "Appendix B.2.2: kappa1 = kappa2 = n/d and gamma2* = 0",
    )
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
    check(
        pair == sp.Rational(1, 3) and is_zero(c2.subs(d, 3) - pair),
        "Appendix B.2.2: E[(x_i^T x_j)^2] = 1/d (checked at d = 3)",
    )
    ordered_pairs = (
        sp.Sum(1, (i, 1, n), (j, 1, n)).doit() - sp.Sum(1, (i, 1, n)).doit()
    )
    tr_S = sp.Sum(1, (j, 1, n)).doit()  # sum_j ||x_j||^2
    kappa1 = tr_S / d
    kappa2 = sp.factor((tr_S + ordered_pairs * c2) / d)
    check(
        is_zero(kappa2 - n * (n + d - 1) / d**2),
        "Appendix B.2.2: kappa2 = n (n + d - 1)/d^2 (Task 1)",
    )
    return {"kappa1": kappa1, "kappa2": kappa2, "pair_moment": c2}


def kappas_rotated(m=(2, 1, 1)) -> dict[str, sp.Expr]:
    """Task 2 moments, derived for explicit multiplicities m (len(m) <= 4;
    the symbolic rotation grows fast): S = O diag(m) O^T with a symbolic
    rotation O, so that kappa1 = E_a[a^T S a] = tr(S)/d = n/d and kappa2 =
    E_a||Sa||^2 = tr(S^2)/d = sum m_i^2/d for every rotation."""
    dim = len(m)
    N, delta = cayley(dim)
    kappa1, kappa2 = _average_over_a(N * sp.diag(*m) * N.T, delta, dim)
    check(
        kappa1 == sp.Rational(sum(m), dim),
        f"Task 2 moments: kappa1 = tr(S)/d for m = {m}",
    )
    check(
        kappa2 == sp.Rational(sum(mi**2 for mi in m), dim),
        f"Task 2 moments: kappa2 = tr(S^2)/d for m = {m}",
    )
    return {"kappa1": kappa1, "kappa2": kappa2}


# --- B.2.3: the recursions, the descent lemma, the contraction


def scalar_recursions() -> dict[str, sp.Expr]:
    """Appendix B.2.3: one step alpha' = alpha - eta beta F, beta' = beta -
    eta alpha F expanded, and gamma' = alpha' beta', Q' = alpha'^2 +
    beta'^2, D' = beta'^2 - alpha'^2 each identified as a combination of
    gamma = alpha beta, Q = alpha^2 + beta^2, D = beta^2 - alpha^2
    (coefficients in eta, F). Checks the paper's three recursions."""
    a1, b1 = alpha - eta * beta * F, beta - eta * alpha * F
    basis = {gamma: alpha * beta, Q: alpha**2 + beta**2, D: beta**2 - alpha**2}
    out = {}
    for name, expr in (
        ("gamma", a1 * b1),
        ("Q", a1**2 + b1**2),
        ("D", b1**2 - a1**2),
    ):
        coeffs = identify(expr, basis, [alpha, beta])
        out[name] = sum(c * sym for sym, c in coeffs.items())
    check(
        is_zero(out["gamma"] - (gamma - eta * Q * F + eta**2 * gamma * F**2)),
        "Appendix B.2.3: gamma' = gamma - eta Q F + eta^2 gamma F^2",
    )
    check(
        is_zero(out["Q"] - ((1 + eta**2 * F**2) * Q - 4 * eta * gamma * F)),
        "Appendix B.2.3: Q' = (1 + eta^2 F^2) Q - 4 eta gamma F",
    )
    check(
        is_zero(out["D"] - (1 - eta**2 * F**2) * D),
        "Appendix B.2.3: D' = (1 - eta^2 F^2) D",
    )
    return out


def recursions() -> dict[str, sp.Expr]:
    """The gamma/S/D recursions in terms of alpha, beta and F (keys
    ``gamma``, ``S``, ``D``; the paper's S_t is Q in
    :func:`scalar_recursions`, from which these are obtained)."""
    sub = {gamma: alpha * beta, Q: alpha**2 + beta**2, D: beta**2 - alpha**2}
    rec = scalar_recursions()
    return {
        "gamma": rec["gamma"].subs(sub),
        "S": rec["Q"].subs(sub),
        "D": rec["D"].subs(sub),
    }


def quadratic_F():
    """F(gamma) = L'(gamma)/d of the parabola L = L* + kappa2 (gamma -
    gamma*)^2 (symbolic gamma*, L*), which :func:`landscape` derives for
    both targets."""
    return sp.diff(L_star + k2 * (gamma - gamma_star) ** 2, gamma) / d


def first_step(target: str | None = None) -> dict[str, sp.Expr]:
    """Appendix B.2.3, Part 2: one step of alpha' = alpha - eta beta
    F(gamma), beta' = beta - eta alpha F(gamma) from alpha~_0 = 0, beta~_0 =
    beta0, with F = L'/d of the derived landscape of ``target`` (None: the
    parabola with symbolic gamma*). Returns alpha1, beta1, gamma1, Q1, D1."""
    if target is None:
        Fg, g_star = quadratic_F(), gamma_star
    else:
        land = landscape(target)
        Fg, g_star = land["F"], land["gamma_star"]
    a0, b0 = sp.S.Zero, beta0
    F0 = Fg.subs(gamma, a0 * b0)
    a1, b1 = sp.factor(a0 - eta * b0 * F0), sp.factor(b0 - eta * a0 * F0)
    check(
        is_zero(a1 - 2 * eta * beta0 * k2 * g_star / d) and b1 == beta0,
        "Appendix B.2.3: alpha1 = 2 eta beta0 kappa2 gamma*/d, beta1 = beta0",
    )
    return {
        "alpha1": a1,
        "beta1": b1,
        "gamma1": sp.factor(a1 * b1),
        "Q1": sp.factor(a1**2 + b1**2),
        "D1": sp.factor(b1**2 - a1**2),
    }


def first_iteration() -> sp.Expr:
    """alpha~_1 from alpha~_0 = 0 (Appendix B.2.3, Part 2), computed by
    :func:`first_step`: ``2 eta beta0 kappa2 gamma*/d`` (gamma* symbolic)."""
    return first_step()["alpha1"]


def q_increment() -> sp.Expr:
    """Appendix B.2.3, Part 2: Q' - Q from :func:`scalar_recursions`,
    factored: ``eta F (eta F Q - 4 gamma)``, which is >= 0 whenever F <= 0
    and gamma >= 0 (so Q never decreases while gamma is in [0, gamma*]) --
    the lower bound Q_t >= Q_1 >= beta0^2."""
    inc = sp.factor(scalar_recursions()["Q"] - Q)
    check(
        is_zero(inc - eta * F * (eta * F * Q - 4 * gamma)),
        "Appendix B.2.3: Q' - Q = eta F (eta F Q - 4 gamma)",
    )
    return inc


def level_set() -> list:
    """Appendix B.2.3, Part 1: the ends of the sublevel set {L(gamma) <=
    L(gamma_0)} from gamma_0 = 0 for the parabola: the solutions of L(gamma)
    = L(0), i.e. [0, 2 gamma*]."""
    L = L_star + k2 * (gamma - gamma_star) ** 2
    ends = sorted(
        sp.solve(sp.Eq(L, L.subs(gamma, 0)), gamma),
        key=lambda e: e.subs(gamma_star, 1),
    )
    check(
        ends == [0, 2 * gamma_star],
        "Appendix B.2.3: the sublevel set from gamma_0 = 0 is [0, 2 gamma*]",
    )
    return ends


def descent_lemma() -> dict[str, sp.Expr]:
    """Theorem 4.2's descent lemma (Appendix B.2.3, Parts 1 and 3). For the
    quadratic ``L = L* + kappa2 (gamma - gamma*)^2`` (so F = L'/d) one step
    of the gamma recursion (:func:`scalar_recursions`) changes the loss by
    exactly ``-eta d Q F^2 + B`` with ``B = eta^2 d gamma F^3 + kappa2
    (eta^2 Q^2 F^2 - 2 eta^3 gamma Q F^3 + eta^4 gamma^2 F^4)`` (Q =
    alpha~^2 + beta~^2, the paper's S_t). Divided by ``eta d Q F^2``, B is
    ``chi u + vartheta (1 - chi u)^2`` with chi = eta F, u = gamma/Q (``|u|
    <= 1/2`` always) and vartheta = kappa2 eta Q/d (Greek, so that x and y
    keep their meanings elsewhere in the book). Under the first two
    conditions of eta_max, ``|chi| <= 1/4`` and vartheta <= 1/8, that ratio
    is at most 113/512 < 1/2: the loss falls by at least ``eta d Q F^2 / 2``
    per step (Part 3)."""
    chi, u, th = sp.symbols("chi u vartheta", real=True)
    L = lambda g: L_star + k2 * (g - gamma_star) ** 2
    Fg = sp.diff(L(gamma), gamma) / d
    g_next = scalar_recursions()["gamma"].subs(F, Fg)
    change = sp.expand(L(g_next) - L(gamma))
    B = eta**2 * d * gamma * F**3 + k2 * (
        eta**2 * Q**2 * F**2
        - 2 * eta**3 * gamma * Q * F**3
        + eta**4 * gamma**2 * F**4
    )
    check(
        is_zero(change - (-eta * d * Q * F**2 + B).subs(F, Fg)),
        "Appendix B.2.3: one step changes L by -eta d Q F^2 + B",
    )
    ratio = chi * u + th * (1 - chi * u) ** 2
    check(
        is_zero(
            (B / (eta * d * Q * F**2)).subs(gamma, u * Q)
            - ratio.subs({chi: eta * F, th: k2 * eta * Q / d})
        ),
        "Appendix B.2.3: B/(eta d Q F^2) = chi u + vartheta (1 - chi u)^2",
    )
    # increasing in vartheta ((1 - chi u)^2 >= 0) and in p = chi u (slope 1 - 2
    # vartheta (1 - p) >= 1 - 9/32 > 0) on |p| <= 1/8, 0 <= vartheta <= 1/8:
    # the maximum is at the corner p = vartheta = 1/8
    p = sp.Symbol("p", real=True)
    slope = sp.diff(ratio.subs(chi * u, p), p)
    check(
        slope.subs({p: -sp.Rational(1, 8), th: sp.Rational(1, 8)}) > 0,
        "Appendix B.2.3: the ratio increases in chi u (smallest slope > 0)",
    )
    ratio_max = ratio.subs(
        {chi: sp.Rational(1, 4), u: sp.Rational(1, 2), th: sp.Rational(1, 8)}
    )
    check(
        ratio_max == sp.Rational(113, 512) and ratio_max < sp.Rational(1, 2),
        "Appendix B.2.3, Part 3: the ratio is at most 113/512 < 1/2",
    )
    return {
        "change": -eta * d * Q * F**2 + B,
        "ratio": ratio,
        "ratio_max": ratio_max,
    }


def contraction() -> dict[str, sp.Expr]:
    """Appendix B.2.3, Part 3: with F = (2 kappa2/d)(gamma - gamma*) and L -
    L* = kappa2 (gamma - gamma*)^2, the descent bound -eta d Q F^2/2 equals
    -(2 eta kappa2 Q/d)(L - L*), so L_{t+1} - L* <= (1 - 2 eta kappa2
    Q_t/d)(L_t - L*). Returns the factor ``1 - 2 eta kappa2 Q/d``."""
    Fg = quadratic_F()
    excess = k2 * (gamma - gamma_star) ** 2
    bound = -eta * d * Q * Fg**2 / 2
    factor = sp.factor(sp.cancel((excess + bound) / excess))
    check(
        is_zero(factor - (1 - 2 * eta * k2 * Q / d)),
        "Appendix B.2.3, Part 3: the factor is 1 - 2 eta kappa2 Q/d",
    )
    return {"factor": factor, "bound": sp.factor(bound)}


def eta_max(
    kappa2: float, g_star: float, dim: int, S0: float
) -> dict[str, float]:
    """The paper's closed form of eta_max (Appendix B.2.3, second line):
    ``min{d/(8 kappa2 sqrt(1 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2
    sqrt(2 S0 gamma*))}`` evaluated numerically, with its three terms."""
    values = [
        dim / (8 * kappa2 * math.sqrt(1 + 16 * g_star**2)),
        dim / (2 * kappa2 * S0),
        dim / (2 * kappa2 * math.sqrt(2 * S0 * g_star)),
    ]
    return {"terms": values, "eta_max": min(values)}


def eta_max_first_line(
    kappa2: float,
    g_star: float,
    dim: int,
    S0: float,
    F_max: float,
    S_max: float,
    Gamma: float,
) -> list[float]:
    """The six terms of the first line of eta_max (Appendix B.2.3) for given
    bounds ``F_max >= |F_t|``, ``S_max >= Q_t``, ``Gamma >= |gamma_t|`` (the
    paper's definitions of these did not survive the extraction; the caller
    measures them along the trajectory)."""
    return [
        1 / (4 * F_max),
        dim / (8 * kappa2 * S_max),
        math.sqrt(dim / (16 * kappa2 * Gamma * F_max)),
        (dim / (16 * kappa2 * Gamma * F_max**2)) ** (1 / 3),
        dim / (2 * kappa2 * S0),
        dim / (2 * kappa2 * math.sqrt(2 * S0 * g_star)),
    ]
