"""Appendix C: the layer with LN (Theorem 4.3), derived with SymPy.

Every function builds its objects from the definitions (the layer (4.5),
the per-sample loss, the gradient-descent recursion), derives what the
appendix states and asserts it against the paper's formula (an
``AssertionError`` if one fails). The chapter ``proof_with_ln`` shows them
step by step.

- C.1.1: :func:`output_lemma` (y = h/||z||), :func:`structured_gradients`
- C.1.2: :func:`induction` (base case, inductive step), :func:`schur`
- C.2.1: :func:`symmetric_recursion`, :func:`reduced_loss`,
  :func:`cauchy_schwarz`, :func:`gamma_increment`
- C.2.2: :func:`cube_increment`, :func:`balance`, :func:`large_gamma`
  (:func:`ln_large_gamma` keeps the older two-key summary)
- C.3: :func:`unit_distance`, :func:`loss_bound`, :func:`iterations`

Notation: S = X X^T; s = ||S a||, q = a^T S a, omega = q/s (``c`` in
the code), x = gamma s;
Q = alpha^2 + beta^2 (the paper's S_t), D = beta^2 - alpha^2."""

from .growth import (
    balance,
    cauchy_schwarz,
    cube_increment,
    gamma_increment,
    large_gamma,
    ln_large_gamma,
    reduced_loss,
    symmetric_recursion,
)
from .loss import iterations, loss_bound, unit_distance
from .structure import (
    block_layer,
    induction,
    output_lemma,
    schur,
    structured_gradients,
)
from .symbols import (
    BLOCKS,
    C1,
    D,
    Q,
    S,
    Upsilon3,
    V,
    W,
    X,
    a,
    beta0,
    c,
    cols,
    dim,
    equal_given_norm,
    h2,
    is_zero_matrix,
    phi,
    psi,
    q,
    s,
    scalar,
    u,
    x,
)

__all__ = [
    "dim",
    "cols",
    "X",
    "a",
    "S",
    "BLOCKS",
    "W",
    "V",
    "s",
    "q",
    "c",
    "x",
    "Q",
    "D",
    "beta0",
    "phi",
    "psi",
    "u",
    "Upsilon3",
    "C1",
    "h2",
    "is_zero_matrix",
    "scalar",
    "equal_given_norm",
    "block_layer",
    "output_lemma",
    "structured_gradients",
    "induction",
    "schur",
    "symmetric_recursion",
    "reduced_loss",
    "cauchy_schwarz",
    "gamma_increment",
    "cube_increment",
    "balance",
    "large_gamma",
    "ln_large_gamma",
    "unit_distance",
    "loss_bound",
    "iterations",
]
