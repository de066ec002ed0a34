"""Appendix A.3: the zero blocks' gradient vanishes."""

from __future__ import annotations

import sympy as sp

from .symbols import v, w

# --- Appendix A.3: the zero blocks
# ----------------------------------------------------------

BLOCKS = ("W11", "W12", "W21", "W22", "V11", "V12", "V21", "V22")


def _ln(Z: sp.Matrix) -> sp.Matrix:
    return sp.Matrix.hstack(
        *[
            Z[:, j] / sp.sqrt(sum(e**2 for e in Z[:, j]))
            for j in range(Z.shape[1])
        ]
    )


def zero_block_derivatives(
    L: int = 1, dim: int = 2, cols: int = 2
) -> dict[str, sp.Matrix]:
    """Appendix A.3: the derivative of the looped model's output y_L (L
    loops of the LN layer) along a perturbation ``eps B`` of one block at
    the structured point W12 = w I, V21 = v I (all else 0), at eps = 0, for
    symbolic X, a, w, v and a symbolic direction B. Asserts it is
    identically 0 for the six blocks that start at zero (so the gradient of
    any loss of y_L vanishes there) and not for W12 and V21. Returns
    ``{block: dy_L/deps}``."""
    eps = sp.Symbol("epsilon", real=True)
    X = sp.Matrix(
        dim, cols, lambda i, j: sp.Symbol(f"x{i + 1}{j + 1}", real=True)
    )
    a = sp.Matrix(dim, 1, lambda i, j: sp.Symbol(f"a{i + 1}", real=True))
    B = sp.Matrix(
        dim, dim, lambda i, j: sp.Symbol(f"b{i + 1}{j + 1}", real=True)
    )
    Z = sp.zeros
    E0 = sp.BlockMatrix([[X, Z(dim, 1)], [Z(dim, cols), a]]).as_explicit()
    out = {}
    for name in BLOCKS:
        blocks = {"W": {"12": w * sp.eye(dim)}, "V": {"21": v * sp.eye(dim)}}
        blocks[name[0]][name[1:]] = (
            blocks[name[0]].get(name[1:], Z(dim, dim)) + eps * B
        )

        def full(m):
            return sp.BlockMatrix(
                [
                    [m.get("11", Z(dim, dim)), m.get("12", Z(dim, dim))],
                    [m.get("21", Z(dim, dim)), m.get("22", Z(dim, dim))],
                ]
            ).as_explicit()

        W, V = full(blocks["W"]), full(blocks["V"])
        E = E0
        for _ in range(L):
            E = _ln(E + V * E * E.T * W * E)
        dy = E[dim:, cols].diff(eps).subs(eps, 0)
        if name in (
            "W12",
            "V21",
        ):  # not identically 0: a rational point where it is not
            point = {
                s: sp.Rational(k + 2, k + 3)
                for k, s in enumerate(sorted(dy.free_symbols, key=str))
            }
            assert max(abs(e) for e in dy.xreplace(point).evalf(30)) > 1e-6, (
                name
            )
            out[name] = dy
        else:
            out[name] = dy.applyfunc(lambda e: sp.cancel(sp.together(e)))
            assert out[name] == Z(dim, 1), name
    return out
