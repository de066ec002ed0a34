"""The paper's claims (and the book's own) as data, each with a check that
measures it now.

``check(id)`` measures one claim, ``check_all()`` every registered claim;
the chapters assert the statuses they expect and the reproduction report
lists them all.
"""

# importing the parts registers their claims
from . import part1, part2, part3, part4, part5, part6  # noqa: F401
from .core import (
    REGISTRY,
    STATUSES,
    Claim,
    Result,
    Spread,
    check,
    check_all,
    claim,
    expect,
    ordering,
    over_seeds,
    summary,
    trend_status,
    verdict,
    within,
)
from .part1 import invariance_z

__all__ = [
    "REGISTRY",
    "STATUSES",
    "Claim",
    "Result",
    "Spread",
    "check",
    "check_all",
    "claim",
    "expect",
    "ordering",
    "over_seeds",
    "summary",
    "trend_status",
    "verdict",
    "within",
    "invariance_z",
]
