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
expanding, solving linear systems for unknown coefficients) and asserts what
the paper states about it. Notation: ``q = a^T S a``, ``s = ||S a||``,
``kappa0 = E[q/s]``; the paper's ``S_t = alpha~^2 + beta~^2`` is ``Q`` here
(S is the data matrix), ``D = beta~^2 - alpha~^2``."""

from .convergence import (
    contraction,
    descent_lemma,
    eta_max,
    eta_max_first_line,
    first_iteration,
    first_step,
    level_set,
    q_increment,
    quadratic_F,
    recursions,
    scalar_recursions,
)
from .landscape import (
    cauchy_schwarz_step,
    cayley,
    gram_identity,
    kappas_rotated,
    kappas_sphere,
    landscape,
    no_ln_landscape,
    orthonormal_case,
    sample_loss,
)
from .moments import (
    BLOCKS,
    block,
    expectation,
    identify,
    moment_expectation,
    sphere_average,
)
from .reduction import (
    block_gradients,
    gradient_formulas,
    gradients,
    layer,
    paper_gradient_formulas,
    population_gradient,
    scalar_dynamics,
    structured_point,
)
from .symbols import (
    MOMENTS,
    TARGETS,
    D,
    L_star,
    Q,
    beta0,
    gamma_star,
    k0,
    q,
    s,
)

__all__ = [
    "k0",
    "q",
    "s",
    "Q",
    "D",
    "beta0",
    "gamma_star",
    "L_star",
    "TARGETS",
    "MOMENTS",
    "identify",
    "sphere_average",
    "expectation",
    "block",
    "BLOCKS",
    "layer",
    "structured_point",
    "gradients",
    "block_gradients",
    "paper_gradient_formulas",
    "gradient_formulas",
    "moment_expectation",
    "population_gradient",
    "scalar_dynamics",
    "sample_loss",
    "landscape",
    "no_ln_landscape",
    "cauchy_schwarz_step",
    "gram_identity",
    "cayley",
    "orthonormal_case",
    "kappas_sphere",
    "kappas_rotated",
    "scalar_recursions",
    "recursions",
    "quadratic_F",
    "first_step",
    "first_iteration",
    "q_increment",
    "level_set",
    "descent_lemma",
    "contraction",
    "eta_max",
    "eta_max_first_line",
]
