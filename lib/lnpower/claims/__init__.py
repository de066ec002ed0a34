"""The paper's claims (and the book's own) as data, each with a check that
measures it now.

``check(id)`` measures one claim, ``check_all()`` every registered claim;
the chapters assert the statuses they expect and the reproduction report
lists them all.
"""

# the parts define the checks the ledger names
from . import (  # noqa: F401
    part1,
    part1_transformer,
    part2,
    part2_ln,
    part2_no_ln,
    part3,
    part4,
    part4_depth,
    part4_losses,
    part5,
    part5_saddle,
    part5_training,
    part6,
)
from .core import (
    REGISTRY,
    STATUSES,
    Claim,
    Result,
    Spread,
    check,
    check_all,
    expect,
    load,
    ordering,
    over_seeds,
    summary,
    trend_status,
    verdict,
    within,
)
from .part1 import invariance_z

REGISTRY.update(load())

__all__ = [
    "REGISTRY",
    "STATUSES",
    "Claim",
    "Result",
    "Spread",
    "check",
    "check_all",
    "load",
    "expect",
    "ordering",
    "over_seeds",
    "summary",
    "trend_status",
    "verdict",
    "within",
    "invariance_z",
]
