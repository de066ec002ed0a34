"""Every claim measured: the reproduction report's and ``python -m lnpower
claims``'s list. The chapters' modules are imported here by name, once
each: the ledger's ``check`` names a function of one of them."""

from __future__ import annotations

from ..chapters import (
    beyond,
    beyond_training,
    experiments_grid,
    experiments_layer,
    experiments_looped,
    looped_power_method,
    out_of_distribution,
    principal_components,
    proof_looped,
    transformer,
    where,
    with_ln,
    without_ln,
)
from . import Result, ledger, measure

# the modules imported above, by the name the ledger's checks use
CHAPTERS = {
    name: module
    for name, module in locals().items()
    if getattr(module, "__name__", "").startswith("lnpower.chapters.")
}


def check(id: str, cache=True) -> Result:
    """Measure one claim (its check in its chapter's module)."""
    if id not in ledger():
        raise ValueError(f"unknown claim {id!r}; known: {sorted(ledger())}")
    return measure(id, CHAPTERS[ledger()[id].module], cache)


def check_all(cache=True) -> list[Result]:
    """Measure every claim, in the ledger's order."""
    return [check(id, cache) for id in ledger()]
