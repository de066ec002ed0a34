"""The SymPy derivations behind the paper's proofs, one module per appendix. Every function
derives its result from the definitions and asserts the identities it derives (an
``AssertionError`` if one fails); the chapters of Part VI show them step by step.

- ``section3``: the E^(1) collapse (§3.2, §4.1)
- ``appendix_a``: the looped model, Theorem 4.1 (Appendices A and F)
- ``appendix_b``: the layer without LN, Theorem 4.2
- ``appendix_c``: the layer with LN, Theorem 4.3
"""

from .appendix_a import looped_increment
from .appendix_b import descent_lemma, first_iteration, kappas_sphere, no_ln_landscape, recursions
from .appendix_c import ln_large_gamma
from .section3 import collapse

DERIVATIONS = {
    "recursions": recursions,
    "no_ln_landscape (normalised)": lambda: no_ln_landscape("normalized"),
    "no_ln_landscape (unnormalised)": lambda: no_ln_landscape("unnormalized"),
    "first_iteration": first_iteration,
    "descent_lemma": descent_lemma,
    "ln_large_gamma": ln_large_gamma,
    "looped_increment": looped_increment,
    "kappas_sphere": kappas_sphere,
    "collapse": collapse,
}


def verify_all() -> list[str]:
    """Run every derivation (each asserts what it derives); returns their names."""
    for derive in DERIVATIONS.values():
        derive()
    return list(DERIVATIONS)


__all__ = ["collapse", "descent_lemma", "first_iteration", "kappas_sphere", "ln_large_gamma",
           "looped_increment", "no_ln_landscape", "recursions", "verify_all"]
