"""The SymPy derivations behind the paper's proofs, one module (or package)
per appendix. A function derives its result from the definitions — by
expanding, differentiating, solving or taking limits of the defining
expressions — and asserts what the paper states about it (an
``AssertionError`` if it fails); five steps are restatements checked
instead (an identity typed in and verified, or a moment typed in and checked
at one dimension), and their docstrings and chapters say so. The chapters of
Part VI run them step by step.

- ``section3``: the E^(1) collapse: structured weights make a layer a power
  step (§3.2, §4.1)
- ``appendix_a``: the looped model, Theorem 4.1 (Appendices A and F: Schur's
  lemma, the zero blocks, the eigen-expansion of the loss, the rho^2
  increment)
- ``appendix_b``: the layer without LN, Theorem 4.2 (the reduction, the
  landscapes, the recursions and the convergence proof)
- ``appendix_c``: the layer with LN, Theorem 4.3 (the gradients, structure
  preservation, the divergence of gamma, the gamma^3 increment, the loss
  bound)
- ``appendix_d``: looping at inference, Theorems 4.6 and 4.7 (the exact
  angular error, the bounds, the model without LN)
- ``eigenbasis``: the symbolic orthonormal eigenbasis that Appendices A, D
  and E compute in
- ``common``: the symbols the appendices share
"""

from __future__ import annotations

import importlib
import inspect

APPENDICES = (
    "section3",
    "appendix_a",
    "appendix_b",
    "appendix_c",
    "appendix_d",
)


def derivations() -> dict[str, object]:
    """Every derivation that takes no argument, by ``module.function`` name
    (the landscapes, which take the target, for both targets)."""
    out = {}
    for name in APPENDICES:
        module = importlib.import_module(f"{__name__}.{name}")
        for fname in getattr(module, "__all__", dir(module)):
            f = getattr(module, fname)
            if not inspect.isfunction(f) or fname.startswith("_"):
                continue
            params = inspect.signature(f).parameters.values()
            if all(p.default is not inspect.Parameter.empty for p in params):
                out[f"{name}.{fname}"] = f
    landscape = importlib.import_module(f"{__name__}.appendix_b").landscape
    for target in ("normalized", "unnormalized"):
        out[f"appendix_b.landscape({target})"] = lambda t=target: landscape(t)
    return out


def verify_all() -> list[str]:
    """Run every derivation (each asserts what it derives); returns their
    names."""
    found = derivations()
    for derive in found.values():
        derive()
    return list(found)
