"""Appendix C.1: the output of the LN layer, its gradients, and the
preservation of the structure (the base case, the inductive step, the
isotropy lemma and Schur's lemma)."""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..appendix_a.schur import commutant, sign_and_cycle
from ..common import alpha, beta
from .symbols import (
    BLOCKS,
    S,
    V,
    W,
    X,
    a,
    beta0,
    cols,
    dim,
    equal_given_norm,
    is_zero_matrix,
)


@cache
def block_layer():
    """E + V E E^T W E of (4.5) in d x d blocks, for symbolic d and n, with
    E = [[X, 0], [0, a]]: the 2 x 2 grid of blocks (rows: top, bottom half;
    block columns: the n tokens of X, the query token)."""
    E = sp.BlockMatrix(
        [[X, sp.ZeroMatrix(dim, 1)], [sp.ZeroMatrix(dim, cols), a]]
    )
    Wm = sp.BlockMatrix([[W["11"], W["12"]], [W["21"], W["22"]]])
    Vm = sp.BlockMatrix([[V["11"], V["12"]], [V["21"], V["22"]]])
    gram = sp.block_collapse(E * E.T)
    G = gram.blocks
    assert is_zero_matrix(G[0, 0] - S) and is_zero_matrix(G[1, 1] - a * a.T)
    assert is_zero_matrix(G[0, 1]) and is_zero_matrix(G[1, 0])
    return sp.block_collapse(E + Vm * E * E.T * Wm * E)


def output_lemma() -> dict:
    """The lemma of Appendix C.1.1. The last column z of E + V E E^T W E is
    [p; h] with ``p = V11 S W12 a + V12 a a^T W22 a`` and
    ``h = a + V21 S W12 a + V22 a a^T W22 a`` (symbolic d, n); W11 and W21
    do not enter. LN divides z by ||z||, so y = h/||z|| with
    ||z||^2 = ||p||^2 + ||h||^2. The same on explicit d = n = 2 matrices
    of symbols, computed entry by entry from the definition."""
    Z = block_layer()
    p, h = sp.expand(Z.blocks[0, 1]), sp.expand(Z.blocks[1, 1])
    p_paper = V["11"] * S * W["12"] * a + V["12"] * a * a.T * W["22"] * a
    h_paper = a + V["21"] * S * W["12"] * a + V["22"] * a * a.T * W["22"] * a
    assert is_zero_matrix(p - p_paper) and is_zero_matrix(h - h_paper)
    assert not {W["11"], W["21"]} & (p.free_symbols | h.free_symbols)
    explicit = _explicit_column(p, h)
    return {"p": p, "h": h, "explicit": explicit}


def _explicit_column(p, h, k: int = 2) -> dict:
    """d = n = k: the last column of E + V E E^T W E entry by entry, against
    p and h evaluated on the same matrices; ||c||^2 = ||p||^2 + ||h||^2."""

    def mat(name, rows, cols_):
        return sp.Matrix(
            rows,
            cols_,
            lambda i, j: sp.Symbol(f"{name}{i + 1}{j + 1}", real=True),
        )

    Xe = mat("x", k, k)
    ae = sp.Matrix(k, 1, lambda i, _: sp.Symbol(f"a{i + 1}", real=True))
    We = {b: mat(f"w^{{{b}}}_", k, k) for b in BLOCKS}
    Ve = {b: mat(f"v^{{{b}}}_", k, k) for b in BLOCKS}
    E = sp.diag(Xe, ae)
    Wm = sp.Matrix(
        sp.BlockMatrix([[We["11"], We["12"]], [We["21"], We["22"]]])
    )
    Vm = sp.Matrix(
        sp.BlockMatrix([[Ve["11"], Ve["12"]], [Ve["21"], Ve["22"]]])
    )
    col = (E + Vm * E * E.T * Wm * E)[:, k]
    values = {
        X: Xe,
        a: ae,
        **{W[b]: We[b] for b in BLOCKS},
        **{V[b]: Ve[b] for b in BLOCKS},
    }
    pe = sp.Matrix(p.subs(values).doit())
    he = sp.Matrix(h.subs(values).doit())
    assert is_zero_matrix(col[:k, :] - pe)
    assert is_zero_matrix(col[k:, :] - he)
    assert sp.expand(col.dot(col) - pe.dot(pe) - he.dot(he)) == 0
    return {"c": col, "p": pe, "h": he}


@cache
def structured_gradients() -> dict:
    """Appendix C.1.1 at a structured point W12 = alpha I, V21 = beta I
    (other blocks 0), d = 2: the derivative of the per-sample loss
    ||y - t||^2 along a perturbation B -> B + epsilon Omega of each block B,
    from the definition y = h/||z|| with z = [0; a] + V (E E^T) W [0; a] and
    E E^T = diag(S, a a^T) (:func:`block_layer`). S is a symmetric matrix of
    symbols and t a fixed target vector of symbols (any t). Asserts: the
    gradients of W11, W21, W22, V11, V12, V22 are exactly 0;
    ``dL/dW12 = beta S g_h a^T`` and ``dL/dV21 = alpha g_h (S a)^T`` with
    ``g_h = 2 (I - h h^T/||h||^2)(y - t)/||h||``, h = a + alpha beta S a.
    """
    k, eps = 2, sp.Symbol("epsilon", real=True)
    s11, s12, s22 = sp.symbols("s11 s12 s22", real=True)
    Se = sp.Matrix([[s11, s12], [s12, s22]])
    ae = sp.Matrix(sp.symbols("a1 a2", real=True))
    te = sp.Matrix(sp.symbols("t1 t2", real=True))
    delta = sp.Matrix(k, k, lambda i, j: sp.Symbol(f"delta{i + 1}{j + 1}"))
    Z0, I2 = sp.zeros(k), sp.eye(k)
    at = {
        "W": {"11": Z0, "12": alpha * I2, "21": Z0, "22": Z0},
        "V": {"11": Z0, "12": Z0, "21": beta * I2, "22": Z0},
    }
    gram = sp.diag(Se, ae * ae.T)
    e = sp.Matrix([0] * k + list(ae))

    def full(blocks):
        return sp.Matrix(
            sp.BlockMatrix(
                [[blocks["11"], blocks["12"]], [blocks["21"], blocks["22"]]]
            )
        )

    grads = {}
    for name in ("W", "V"):
        for b in BLOCKS:
            moved = {m: dict(at[m]) for m in at}
            moved[name][b] = moved[name][b] + eps * delta
            col = e + full(moved["V"]) * gram * full(moved["W"]) * e
            y = col[k:, :] / sp.sqrt(col.dot(col))
            dloss = sp.diff((y - te).dot(y - te), eps).subs(eps, 0)
            grads[name + b] = sp.Matrix(
                [
                    [sp.diff(dloss, delta[i, j]) for j in range(k)]
                    for i in range(k)
                ]
            )
    for b in ("W11", "W21", "W22", "V11", "V12", "V22"):
        assert grads[b] == sp.zeros(k), b
    h = ae + alpha * beta * Se * ae
    H = sp.expand(h.dot(h))
    r = sp.sqrt(H)
    g_h = 2 / r * (I2 - h * h.T / r**2) * (h / r - te)
    paper = {"W12": beta * Se * g_h * ae.T, "V21": alpha * g_h * (Se * ae).T}
    for b, formula in paper.items():
        assert all(
            equal_given_norm(grads[b][i], formula[i], H) for i in range(k * k)
        ), b
    return {
        **grads,
        "g_h": g_h,
        "h": h,
        "H": H,
        "S": Se,
        "a": ae,
        "t": te,
        "paper": paper,
    }


def induction() -> dict:
    """Appendix C.1.2, symbolic d, n. Base case (W = 0, V21 = beta0 I, other
    blocks 0): p = 0, h = a. Inductive step (W12 = alpha I, V21 = beta I):
    p = 0, h = a + alpha beta S a. At both points the token columns of X
    come out unchanged (top block X, bottom block 0), so LN leaves them."""
    Z = block_layer()
    zero = sp.ZeroMatrix(dim, dim)

    def at(w, v):
        point = {M[b]: zero for M in (W, V) for b in BLOCKS}
        point[W["12"]], point[V["21"]] = w, v
        return [
            sp.expand(Z.blocks[i, j].subs(point).doit())
            for i, j in ((0, 1), (1, 1), (0, 0), (1, 0))
        ]

    base = at(zero, beta0 * sp.Identity(dim))
    step = at(alpha * sp.Identity(dim), beta * sp.Identity(dim))
    for p_, _, x_top, x_bottom in (base, step):
        assert is_zero_matrix(p_) and is_zero_matrix(x_bottom)
        assert is_zero_matrix(x_top - X)
    assert is_zero_matrix(base[1] - a)
    assert is_zero_matrix(step[1] - (a + alpha * beta * S * a))
    return {
        "p0": base[0],
        "h0": base[1],
        "p": step[0],
        "h": step[1],
        "x_columns": step[2],
    }


def schur(k: int = 3) -> dict:
    """Schur's lemma (Lemma F.1) on the orthogonal matrices that the proof
    needs: a k x k matrix J of symbols that commutes with the k sign flips
    diag(+-1) and the cyclic permutation must be a multiple of I (solved as
    linear equations, :func:`lnpower.symbolic.appendix_a.commutant`). The flips
    alone leave the k diagonal entries free, the permutation alone the k
    entries of a circulant."""
    gens = sign_and_cycle(k)
    both = commutant(gens)
    assert len(both.free_symbols) == 1 and both == both[0, 0] * sp.eye(k)
    only_flips, only_cyclic = commutant(gens[:k]), commutant(gens[k:])
    assert len(only_flips.free_symbols) == len(only_cyclic.free_symbols) == k
    return {"M": both, "flips": only_flips, "cyclic": only_cyclic}
