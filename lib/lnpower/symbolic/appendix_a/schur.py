"""Appendix F, Lemma F.1: Schur's lemma for O(d)."""

from __future__ import annotations

import sympy as sp

# --- Appendix F, Lemma F.1
# ------------------------------------------------------------------


def sign_and_cycle(dim: int = 3) -> list[sp.Matrix]:
    """Orthogonal matrices used in the proof of Lemma F.1: the sign flips
    diag(1, .., -1, .., 1) and the cyclic permutation e_i -> e_{i+1}."""
    gens = []
    for k in range(dim):
        flip = sp.eye(dim)
        flip[k, k] = -1
        gens.append(flip)
    cycle = sp.zeros(dim, dim)
    for i in range(dim):
        cycle[(i + 1) % dim, i] = 1
    gens.append(cycle)
    for R in gens:
        assert R.T * R == sp.eye(dim)
    return gens


def commutant(generators: list[sp.Matrix]) -> sp.Matrix:
    """The general matrix M with ``M R = R M`` for every R in
    ``generators``: a symbolic M with the linear equations solved (the free
    entries stay symbols)."""
    dim = generators[0].shape[0]
    M = sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"m{i + 1}{j + 1}"))
    eqs = [e for R in generators for e in (M * R - R * M)]
    (sol,) = sp.solve(eqs, list(M), dict=True)
    return M.subs(sol)


def schur_lemma(dim: int = 3) -> sp.Matrix:
    """Lemma F.1: a matrix that commutes with every orthogonal matrix is c
    I. Already the sign flips and the cyclic permutation force it (asserted:
    one free symbol times I)."""
    M = commutant(sign_and_cycle(dim))
    c = M[0, 0]
    assert c.is_Symbol and M == c * sp.eye(dim)
    return M
