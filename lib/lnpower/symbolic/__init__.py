"""The SymPy derivations behind the paper's proofs, one module per
appendix. A function derives its result from the definitions — by
expanding, differentiating, solving or taking limits of the defining
expressions — and checks what the paper states about it with
:func:`~lnpower.symbolic.common.check`, which raises
:class:`~lnpower.symbolic.common.DerivationFailed` if a step fails (an
explicit ``raise``: ``python -O`` does not remove it, as it would an
``assert``); five steps are restatements checked instead (an identity typed
in and verified, or a moment typed in and checked at one dimension), and
their docstrings and chapters say so. The chapters of Part VI run them step
by step; :func:`verify_all` runs them all and counts the checks of each.

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
- ``common``: the symbols the appendices share, the names of the blocks of
  W and V, ``check`` and ``DerivationFailed``
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator

from ..tasks import POWER_STEP_TARGETS
from . import (
    appendix_a,
    appendix_b,
    appendix_c,
    appendix_d,
    common,
    eigenbasis,
    section3,
)
from .common import _CHECKS

_MODULES = (section3, appendix_a, appendix_b, appendix_c, appendix_d)
APPENDICES = tuple(m.__name__.rpartition(".")[2] for m in _MODULES)


def _functions(module) -> Iterator[tuple[str, Callable]]:
    """The functions defined in ``module`` (not those it imports), cached
    (``functools.cache``) or not, private ones included, in the order of
    definition."""
    for name, f in vars(module).items():
        plain = inspect.unwrap(f) if hasattr(f, "__wrapped__") else f
        if inspect.isfunction(plain) and plain.__module__ == module.__name__:
            yield name, f


def derivations() -> dict[str, Callable[[], object]]:
    """Every public derivation that takes no argument (all its parameters
    have defaults), cached or not, by ``module.function`` name, in the order
    of the module (the landscapes, which take the target, for both
    targets). Some build an expression and check nothing (:func:`verify_all`
    counts 0 for them)."""
    out = {}
    for module in _MODULES:
        name = module.__name__.rpartition(".")[2]
        for fname, f in _functions(module):
            if fname.startswith("_"):
                continue
            params = inspect.signature(f).parameters.values()
            if all(p.default is not inspect.Parameter.empty for p in params):
                out[f"{name}.{fname}"] = f
    for target in POWER_STEP_TARGETS:
        out[f"appendix_b.landscape({target})"] = lambda t=target: (
            appendix_b.landscape(t)
        )
    return out


def _cached() -> list[Callable]:
    """The ``functools.cache``'d functions of the symbolic modules (the
    eigenbasis frame, the layers of Appendices B and C, ...)."""
    return [
        f
        for module in (common, eigenbasis, *_MODULES)
        for _, f in _functions(module)
        if hasattr(f, "cache_clear")
    ]


def count_checks(derive: Callable[[], object]) -> int:
    """Run ``derive()`` with every cache of ``_cached`` cleared and
    return how many :func:`~lnpower.symbolic.common.check` calls ran inside
    it (in this context only)."""
    for f in _cached():
        f.cache_clear()
    counter = [0]
    token = _CHECKS.set(counter)
    try:
        derive()
    finally:
        _CHECKS.reset(token)
    return counter[0]


def verify_all() -> dict[str, int]:
    """Run every derivation of :func:`derivations` and return ``{name:
    number of checks that ran inside it}``. A derivation with 0 builds an
    expression and checks nothing, so it cannot fail; the others raise
    :class:`~lnpower.symbolic.common.DerivationFailed` at the first step
    that does not hold. Each derivation runs with the caches of the cached
    helpers (``functools.cache``: the eigenbasis frame, the layers of
    Appendices B and C, ...) cleared, so its count includes the checks of
    every helper it calls, whatever ran before: two calls give the same
    counts."""
    return {
        name: count_checks(derive) for name, derive in derivations().items()
    }
