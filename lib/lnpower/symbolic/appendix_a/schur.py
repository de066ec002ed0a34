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
    for O in gens:
        assert O.T * O == sp.eye(dim)
    return gens


def commutant(generators: list[sp.Matrix]) -> sp.Matrix:
    """The general matrix J with ``J O = O J`` for every O in
    ``generators``: a symbolic J (entries j11, j12, ...) with the linear
    equations solved (the free entries stay symbols)."""
    dim = generators[0].shape[0]
    J = sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"j{i + 1}{j + 1}"))
    eqs = [e for O in generators for e in (J * O - O * J)]
    (sol,) = sp.solve(eqs, list(J), dict=True)
    return J.subs(sol)


def schur_lemma(dim: int = 3) -> sp.Matrix:
    """Lemma F.1: a matrix that commutes with every orthogonal matrix is c
    I. Already the sign flips and the cyclic permutation force it (asserted:
    one free symbol times I)."""
    J = commutant(sign_and_cycle(dim))
    c = J[0, 0]
    assert c.is_Symbol and J == c * sp.eye(dim)
    return J
