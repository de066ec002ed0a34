"""§3.2 and the display of E^(1) in §4.1: structured weights make the update
a power step."""

from __future__ import annotations

import sympy as sp

from .common import check


def collapse(dim: int = 2, cols: int = 2) -> sp.Matrix:
    """The E^(1) collapse of §4.1 for explicit small d, n with symbolic
    entries: with W12 = w I, V21 = v I, ``V E E^T W E = [[0, 0], [0, w v S
    a]]``."""
    w, v = sp.symbols("w v", real=True)
    X = sp.Matrix(  # entries X_ij (bold x_j are the columns; italic x is
        dim, cols, lambda i, j: sp.Symbol(f"X_{{{i + 1}{j + 1}}}", real=True)
    )  # gamma s in the book's notation table)
    a = sp.Matrix(dim, 1, lambda i, j: sp.Symbol(f"a_{{{i + 1}}}", real=True))
    Z = sp.zeros
    E = sp.BlockMatrix([[X, Z(dim, 1)], [Z(dim, cols), a]]).as_explicit()
    W = sp.BlockMatrix(
        [[Z(dim, dim), w * sp.eye(dim)], [Z(dim, dim), Z(dim, dim)]]
    ).as_explicit()
    V = sp.BlockMatrix(
        [[Z(dim, dim), Z(dim, dim)], [v * sp.eye(dim), Z(dim, dim)]]
    ).as_explicit()
    upd = (V * E * E.T * W * E).applyfunc(sp.expand)
    expected = sp.zeros(2 * dim, cols + 1)
    expected[dim:, cols] = (w * v * X * X.T * a).applyfunc(sp.expand)
    check(
        (upd - expected).applyfunc(sp.expand) == sp.zeros(2 * dim, cols + 1),
        "§4.1: V E E^T W E = [[0, 0], [0, w v S a]] (the E^(1) collapse)",
    )
    return upd
