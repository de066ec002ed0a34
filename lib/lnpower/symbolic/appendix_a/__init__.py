"""Appendices A and F: the looped model (Theorem 4.1).

Schur's lemma for O(d) (Lemma F.1), the zero blocks' vanishing gradient, the
loss in the eigenbasis and the scalar recursion, monotonicity and the limit
of the loss, its 1/rho coefficient c_L, the balance of w and v, and the
limit of the rho^2 increment (Appendix A.5).
"""

from ..appendix_d import LAMBDAS, C, Lsym, rho  # noqa: F401 (appendix_a.C)
from .balance import looped_increment, weight_balance
from .blocks import BLOCKS, zero_block_derivatives
from .loss import (  # noqa: F401 (_per_sample_dist2: the tests read it)
    _per_sample_dist2,
    eigen_loss,
    large_rho,
    monotone,
    scalar_recursion,
)
from .schur import commutant, schur_lemma, sign_and_cycle
from .symbols import v, w  # noqa: F401

__all__ = [
    "BLOCKS",
    "commutant",
    "eigen_loss",
    "large_rho",
    "looped_increment",
    "monotone",
    "scalar_recursion",
    "schur_lemma",
    "sign_and_cycle",
    "weight_balance",
    "zero_block_derivatives",
]
