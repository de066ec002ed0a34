"""The registry: each claim is declared as data in ``ledger.toml`` (an id,
where it is in the paper, the statement, the paper's value or prediction, a
tolerance, its chapter) and names the ``check`` that measures it now.

Statuses: ``reproduced`` (within tolerance), ``partial`` (the trend holds
but the stated value is not reached within the tolerance at the horizon
checked), ``seed-dependent`` and ``inconclusive`` (below), ``not
reproduced``.

A claim about SGD is measured over an ensemble of seeds
(``lnpower.runs.ensemble``): its check returns a :class:`Spread`, the
measured quantity and whether the paper's sentence holds, seed by seed. The
rule (:meth:`Spread.status`): ``reproduced`` if the sentence holds for every
seed, ``not reproduced`` if it holds for none, ``seed-dependent`` otherwise.
An ordering (``A above B``) whose ensemble medians differ by less than the
ensemble's spread is ``inconclusive`` (:func:`ordering`), whatever each seed
says.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from .. import cache as _cache
from .statements import SOURCES, STATEMENTS, statement_name  # noqa: F401
from .status import (  # noqa: F401 (the rules, re-exported)
    STATUSES,
    Spread,
    ordering,
    over_seeds,
    trend_status,
    verdict,
    within,
)


@dataclass(frozen=True)
class Claim:
    """One checkable claim. ``source`` is ``"paper"`` or ``"book"`` (the
    book's own claims)."""

    id: str
    where: str
    statement: str
    paper: str
    tolerance: str
    chapter: str
    check: Callable[[], tuple[float | str, str, str]]
    source: str = "paper"
    ref: str = ""  # label of the statement box the claim is about (STATEMENTS)


@dataclass(frozen=True)
class Result:
    """A claim checked now: the measured value, the status and a one-line
    detail."""

    id: str
    where: str
    statement: str
    paper: str
    measured: float | str
    tolerance: str
    status: str
    detail: str
    chapter: str
    source: str
    ref: str
    ensemble: dict | None = (
        None  # Spread.as_dict() for a claim measured over seeds
    )

    def as_dict(self) -> dict:
        return asdict(self)


def _module(fn) -> str:
    """The library module that defines ``fn``, as ``lnpower.cache`` names
    it; ``claims/core`` for a check defined outside the library."""
    if not fn.__module__.startswith("lnpower."):
        return "claims/core"
    return fn.__module__.removeprefix("lnpower.").replace(".", "/")


LEDGER = Path(__file__).with_name("ledger.toml")
# every claim, in the ledger's order (filled by ``lnpower.claims``)
REGISTRY: dict[str, Claim] = {}
FIELDS = (
    "id", "ref", "where", "statement", "paper", "tolerance", "chapter",
    "source", "check",
)  # fmt: skip


def load(path: Path = LEDGER) -> dict[str, Claim]:
    """The claims declared in the TOML file ``path`` (``ledger.toml``), in
    its order, each with its check resolved: ``check = "module:function"``
    names a function of ``lnpower.claims.module``. Every field of
    ``FIELDS`` is required, none other is allowed, ``ref`` must be a
    statement of :data:`STATEMENTS` and ``source`` one of :data:`SOURCES`;
    ``ValueError`` names the claim and the field otherwise."""
    import importlib
    import tomllib

    claims: dict[str, Claim] = {}
    for n, entry in enumerate(tomllib.loads(path.read_text())["claim"]):
        name = f"{path.name}, claim {entry.get('id', f'#{n + 1}')!r}"
        missing = [f for f in FIELDS if f not in entry]
        extra = sorted(set(entry) - set(FIELDS))
        if missing or extra:
            raise ValueError(f"{name}: missing {missing}, unknown {extra}")
        if entry["ref"] not in STATEMENTS:
            raise ValueError(
                f"{name}: unknown statement {entry['ref']!r}; "
                f"known: {sorted(STATEMENTS)}"
            )
        if entry["source"] not in SOURCES:
            raise ValueError(
                f"{name}: source {entry['source']!r} is not one of "
                f"{sorted(SOURCES)}"
            )
        if entry["id"] in claims:
            raise ValueError(f"{name}: declared twice")
        module, _, function = entry["check"].partition(":")
        mod = importlib.import_module(f"lnpower.claims.{module}")
        if not callable(getattr(mod, function, None)):
            raise ValueError(
                f"{name}: check {entry['check']!r} is not a function of "
                f"lnpower.claims.{module}"
            )
        entry = {**entry, "check": getattr(mod, function)}
        claims[entry["id"]] = Claim(**entry)
    return claims


def check(id: str, cache=True) -> Result:
    """Check one claim. Its measurement is kept in the disk cache
    (``lnpower.cache``), keyed by the code of the module that declares it
    and of every library module that module imports
    (:func:`lnpower.codegraph.closure`), so a chapter and the reproduction
    report that check the same claim measure it once; a change to that code
    measures it again, a change elsewhere (the book's tooling, say) does
    not."""
    if id not in REGISTRY:
        raise ValueError(f"unknown claim {id!r}; known: {sorted(REGISTRY)}")
    c = REGISTRY[id]

    def measure():
        out = c.check()
        measured, status, detail = out[:3]
        if status not in STATUSES:
            raise ValueError(f"claim {id}: bad status {status!r}")
        return [
            measured,
            status,
            detail,
            out[3].as_dict() if len(out) > 3 else None,
        ]

    measured, status, detail, spread = _cache.cached(
        "claim",
        [id],
        _cache.closure(_module(c.check)),
        measure,
        lambda out, folder: (folder / "result.json").write_text(
            json.dumps(out, default=float)
        ),
        lambda folder: json.loads((folder / "result.json").read_text()),
        cache,
    )
    return Result(
        c.id,
        c.where,
        c.statement,
        c.paper,
        measured,
        c.tolerance,
        status,
        detail,
        c.chapter,
        c.source,
        c.ref,
        spread,
    )


def check_all() -> list[Result]:
    """Check every registered claim, in registration order."""
    return [check(i) for i in REGISTRY]


def expect(
    expected: dict[str, str | tuple[str, ...]], width: int = 78
) -> list[Result]:
    """What a chapter runs under its experiments: check each claim now,
    print its status, the test it must pass and what was measured (wrapped
    to ``width`` columns), and assert the status is the one ``expected`` (a
    status, or a tuple of acceptable ones)."""
    import textwrap

    results = []
    for id, want in expected.items():
        r = check(id)
        print(textwrap.fill(f"{r.id}: {r.status}", width))
        for what, text in (("test", r.tolerance), ("measured", r.detail)):
            print(
                textwrap.fill(
                    f"{what}: {text}",
                    width,
                    initial_indent="    ",
                    subsequent_indent="      ",
                )
            )
        ok = r.status in ((want,) if isinstance(want, str) else want)
        assert ok, (
            f"claim {id}: status {r.status!r}, expected {want!r} ({r.detail})"
        )
        results.append(r)
    return results


def summary(results: list[Result]) -> str:
    """Counts of each status, the paper's claims and the book's own apart:
    ``the paper's claims: N reproduced, ...; the book's own claims: ...``."""
    parts = []
    for source, name in SOURCES.items():
        mine = [r for r in results if r.source == source]
        if mine:
            parts.append(
                f"{name} ({len(mine)}): "
                + ", ".join(
                    f"{sum(r.status == s for r in mine)} {s}" for s in STATUSES
                )
            )
    return "; ".join(parts)
