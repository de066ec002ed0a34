"""Appendices D and E: looping a learned layer at inference (Theorems 4.6
and 4.7).

The eigen-expansion of ``M^L a`` in a symbolic orthonormal eigenbasis, the
exact angular error (D.1), certificates for the two bounds of Theorem 4.6,
the unnormalised model and the contraction factor R(gamma), and its limit
(Appendix E).

The eigenbasis is the columns of a symbolic rotation in the Cayley
parametrisation ``O = (I - A)(I + A)^{-1}``, A skew-symmetric with three
free symbols: every rotation without the eigenvalue -1, a dense subset of
SO(3). The identities derived are rational identities in the three
parameters, so they hold on all of SO(3) by continuity, and flipping the
sign of a column (a reflection) only flips the sign of the matching c_i.
"""

from ..common import gamma  # noqa: F401 (read as appendix_d.gamma)
from ..eigenbasis import LAMBDAS, C, Lsym, rho  # noqa: F401
from .bounds import bound_certificates, nonnegative_certificate
from .expansion import (
    angle_expansion,
    eigen_loss_terms,
    mu_ordering,
    power_expansion,
)
from .unnormalised import (
    contraction_factor,
    layer_is_normalised_power,
    scale_invariance,
)

__all__ = [
    "angle_expansion",
    "bound_certificates",
    "contraction_factor",
    "eigen_loss_terms",
    "layer_is_normalised_power",
    "mu_ordering",
    "nonnegative_certificate",
    "power_expansion",
    "scale_invariance",
]
