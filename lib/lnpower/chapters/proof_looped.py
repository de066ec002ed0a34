"""The chapter proof_looped (Part VI) and the proofs' chapters after it:
every step of the paper's proofs that SymPy does (``lnpower.symbolic``),
run and counted."""

from __future__ import annotations

from .. import symbolic
from ..claims.status import verdict
from ..symbolic.common import DerivationFailed


def symbolic_identities():
    """Every derivation of ``lnpower.symbolic`` run, each with the number of
    checks it makes: how many of those that can fail (at least one check)
    hold. A derivation that only builds an expression is not counted."""
    counts, failed = {}, []
    for name, derive in symbolic.derivations().items():
        try:
            counts[name] = symbolic.count_checks(derive)
        except DerivationFailed as err:
            failed.append(f"{name} ({err})")
    can_fail = len(failed) + sum(k > 0 for k in counts.values())
    per = {
        a: sum(k for n, k in counts.items() if n.startswith(a + "."))
        for a in symbolic.APPENDICES
    }
    empty = [n for n, k in counts.items() if k == 0]
    return (
        f"{can_fail - len(failed)} of {can_fail} hold",
        verdict(not failed),
        "failed: " + ", ".join(failed)
        if failed
        else f"{sum(counts.values())} checks: "
        + ", ".join(f"{a} {k}" for a, k in per.items())
        + f"; not counted (they check nothing): {', '.join(empty)}",
    )
