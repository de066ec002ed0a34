"""Appendix B.1: the reduction to a scalar dynamic (the block gradients, the
gradient formulas, the population gradient, the scalar recursions)."""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..common import F, alpha, beta, d, eta, gamma, is_zero, k1, k2
from .moments import BLOCKS, _sym, block, moment_expectation
from .symbols import TARGETS


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
    for name in BLOCKS:
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
    X, a and target t. Asserts that all but the W12 and V21 gradients are
    identically 0."""
    grads = _structured_gradients(dim, cols)
    for name, G in grads.items():
        assert (G == sp.zeros(dim, dim)) == (name not in ("W12", "V21")), name
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
    to the paper's formulas; asserts they agree. Returns ``{block:
    (derivative, formula)}``."""
    lay = layer(dim, cols)
    out = {}
    for name, formula in paper_gradient_formulas(dim, cols).items():
        B = block(lay[name[0]], name)
        derived = B.applyfunc(lambda e: sp.diff(lay["loss"], e))
        assert (derived - formula).applyfunc(sp.expand) == sp.zeros(
            dim, dim
        ), name
        out[name] = (derived, formula)
    return out


def population_gradient(target: str = "unnormalized") -> dict[str, sp.Expr]:
    """Appendix B.1, isotropy, for general d with matrix symbols: at W12 =
    alpha I, V21 = beta I, the per-sample gradients 2 S V21^T (y - t) a^T
    and 2 (y - t)(S W12 a)^T (t = S a) expanded, and their expectations from
    E[a a^T] = I/d, E[S] = kappa1 I, E[S^2] = kappa2 I (a independent of X;
    (A1)-(A2)): both are multiples of I, ``dL/dW12 = c_W I`` and ``dL/dV21 =
    c_V I``. Also the population loss L(gamma) by the same rules, and
    asserts ``c_W = beta L'(gamma)/d``, ``c_V = alpha L'(gamma)/d``. The
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
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
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
    assert not L.has(alpha) and not L.has(
        beta
    )  # a function of gamma = alpha beta alone
    dL = sp.diff(L, gamma).subs(gamma, alpha * beta)
    assert is_zero(out["W12"] - beta * dL / d) and is_zero(
        out["V21"] - alpha * dL / d
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
    assert res_W == 0 and res_V == 0
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
