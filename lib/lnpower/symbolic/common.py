"""Shared SymPy symbols and helpers of the derivations (and the names of
the blocks of W and V, :data:`WEIGHT_BLOCKS`), and :func:`check`,
which tests one step of a derivation and raises :class:`DerivationFailed`
when it does not hold (an explicit ``raise``, which ``python -O`` keeps,
unlike an ``assert`` statement)."""

from __future__ import annotations

from contextvars import ContextVar

import sympy as sp

from ..model import BLOCKS

eta, gamma, alpha, beta, F, d, n = sp.symbols(
    "eta gamma alpha beta F d n", real=True
)
k1, k2, k3 = sp.symbols("kappa1 kappa2 kappa3", positive=True)
#: the names of the eight d x d blocks of W and V: "W11", ..., "V22"
WEIGHT_BLOCKS = tuple(f"{M}{b}" for M in "WV" for b in BLOCKS)


class DerivationFailed(ArithmeticError):
    """A step of a derivation does not hold."""


# The checks run in the current context are counted into the one-element
# list held here while :func:`lnpower.symbolic.verify_all` runs a
# derivation; None (the default) means nothing is counted. A context
# variable rather than a module-level counter: nothing is shared between
# calls, threads or asyncio tasks.
_CHECKS: ContextVar[list[int] | None] = ContextVar(
    "lnpower_symbolic_checks", default=None
)


def check(condition: bool, what: str) -> None:
    """Raise ``DerivationFailed(what)`` unless ``condition`` holds; ``what``
    names the step (the paper's equation or appendix). Counted when
    :func:`lnpower.symbolic.verify_all` is counting."""
    counter = _CHECKS.get()
    if counter is not None:
        counter[0] += 1
    if not condition:
        raise DerivationFailed(what)


def is_zero(expr) -> bool:
    """True when ``expr`` simplifies to 0."""
    return sp.simplify(sp.expand(expr)) == 0
