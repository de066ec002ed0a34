"""The paper's claims (and the book's own) as data, each measured by a
function of its chapter's module.

``ledger.toml`` declares every claim: an id, the numbered statement it is
about (``ref``), where it is in the paper, the sentence checked, the
paper's value, the test it must pass, the chapter that expects its status,
its source (the paper or the book) and ``check``, the function of
``lnpower.chapters`` that measures it (``"with_ln.ln_zero_blocks"``).
A chapter measures its own claims with :func:`expect`, passing its module;
the reproduction report and ``python -m lnpower claims`` measure them all
(``lnpower.claims.report``). The status rules are in
``lnpower.claims.status``.

A claim's measurement is cached under a key of the code of its chapter's
module and of every library module that one imports
(:func:`lnpower.cache.code_key`): a chapter and the report measure it once,
and editing one chapter's module measures only that chapter's claims again.
"""

from __future__ import annotations

import functools
import hashlib
import json
import textwrap
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

from .. import cache as _cache
from .status import STATUSES

LEDGER = Path(__file__).with_name("ledger.toml")
#: the two sources of a claim: the paper, or the book itself
SOURCES = {"paper": "the paper's claims", "book": "the book's own claims"}
#: The paper's numbered statements that claims are about: the label of the
#: box that states each, and its chapter
STATEMENTS = {
    "def-3-1": "book/principal_components",
    "ass-3-2": "book/principal_components",
    "ex-3-3": "book/principal_components",
    "thm-4-1": "book/looped_power_method",
    "thm-4-2": "book/without_ln",
    "thm-4-3": "book/with_ln",
    "ass-4-4": "book/out_of_distribution",
    "thm-4-6": "book/out_of_distribution",
    "thm-4-7": "book/out_of_distribution",
}
_KINDS = {
    "def": "Definition",
    "ass": "Assumption",
    "ex": "Example",
    "thm": "Theorem",
}
FIELDS = (
    "id", "ref", "where", "statement", "paper", "tolerance", "source",
    "check",
)  # fmt: skip


def statement_name(ref: str) -> str:
    """The paper's name of a statement label: "thm-4-2" -> "Theorem 4.2"."""
    kind, major, minor = ref.split("-")
    return f"{_KINDS[kind]} {major}.{minor}"


@dataclass(frozen=True)
class Claim:
    """One checkable claim, as the ledger declares it. ``check`` names the
    function that measures it: ``"module.function"`` of
    ``lnpower.chapters``."""

    id: str
    ref: str
    where: str
    statement: str
    paper: str
    tolerance: str
    source: str
    check: str

    @property
    def module(self) -> str:
        """The name of the chapter's module (``"with_ln"``)."""
        return self.check.partition(".")[0]

    @property
    def chapter(self) -> str:
        """The chapter that expects the claim's status: the one of its
        check's module (``"book/with_ln"``)."""
        return f"book/{self.module}"


@dataclass(frozen=True)
class Result:
    """A claim measured now: the measured value, the status and a one-line
    detail (and, for a claim measured over seeds, its spread)."""

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
    ensemble: dict | None = None  # Spread.as_dict() of an ensemble claim

    def as_dict(self) -> dict:
        return asdict(self)


def load(path: Path = LEDGER) -> dict[str, Claim]:
    """The claims declared in the TOML file ``path``, in its order. Every
    field of ``FIELDS`` is required, none other is allowed, ``ref`` must be
    a statement of :data:`STATEMENTS`, ``source`` one of :data:`SOURCES`
    and ``check`` of the form ``module.function``; ``ValueError`` names the
    claim and the field otherwise."""
    claims: dict[str, Claim] = {}
    for k, entry in enumerate(tomllib.loads(path.read_text())["claim"]):
        name = f"{path.name}, claim {entry.get('id', f'#{k + 1}')!r}"
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
        module, dot, function = entry["check"].partition(".")
        if not (dot and module.isidentifier() and function.isidentifier()):
            raise ValueError(
                f"{name}: check {entry['check']!r} is not 'module.function'"
            )
        if entry["id"] in claims:
            raise ValueError(f"{name}: declared twice")
        claims[entry["id"]] = Claim(**entry)
    return claims


@functools.cache
def ledger() -> dict[str, Claim]:
    """Every claim of ``ledger.toml``, by id (read once)."""
    return load()


def measure(id: str, module: ModuleType, cache=True) -> Result:
    """Measure the claim ``id`` with its check, a function of ``module``
    (its chapter's module of ``lnpower.chapters``). The measurement is
    kept in the cache under ``claim/claim=ID,stored=...,shift=K,code=...``
    (a status of *not measured* is not kept)."""
    if id not in ledger():
        raise ValueError(f"unknown claim {id!r}; known: {sorted(ledger())}")
    c = ledger()[id]
    if module.__name__.rpartition(".")[2] != c.module:
        raise ValueError(
            f"claim {id} is checked by lnpower.chapters.{c.check}, not "
            f"by a function of {module.__name__}"
        )
    check = getattr(module, c.check.partition(".")[2], None)
    if not callable(check):
        raise ValueError(
            f"claim {id}: {c.check} is not a function of {module.__name__}"
        )

    def compute():
        out = check()
        measured, status, detail = out[:3]
        if status not in STATUSES:
            raise ValueError(f"claim {id}: bad status {status!r}")
        spread = out[3].as_dict() if len(out) > 3 else None
        return [measured, status, detail, spread]

    key = claim_key(id, module)
    measured, status, detail, spread = _cache.values(
        "claim", key, compute, cache
    )
    if status == "not measured":  # its data may come: never kept
        _cache.forget("claim", key, cache)
    return Result(
        c.id, c.where, c.statement, c.paper, measured, c.tolerance, status,
        detail, c.chapter, c.source, c.ref, spread,
    )  # fmt: skip


def stored_runs_hash(folder: Path | None = None) -> str:
    """A short hash of what the runs stored with the library are (the
    JSON records in ``folder``, default
    :data:`lnpower.cache.STORED`: each file's name and
    key, which fixes its numbers; not when, where or how fast it was
    trained): part of every claim's key."""
    h = hashlib.sha256()
    for path in sorted((folder or _cache.STORED).glob("*.json")):
        key = json.loads(path.read_text())["key"]
        h.update(path.name.encode() + json.dumps(key, sort_keys=True).encode())
    return h.hexdigest()[:12]


def claim_key(id: str, module: ModuleType) -> str:
    """The cache key of a claim's measurement: the code of its chapter's
    module and of what that imports (:func:`lnpower.cache.code_key`), and
    the runs stored with the library, which a check may read."""
    return _cache.code_key(
        module.__name__, claim=id, stored=stored_runs_hash()
    )


class UnexpectedStatus(RuntimeError):
    """A chapter's claim did not have the status the chapter expects."""


def expect(
    module: ModuleType,
    expected: dict[str, str | tuple[str, ...]],
    width: int = 78,
) -> list[Result]:
    """What a chapter runs under its experiments: measure each of its claims
    now (checks of ``module``), print its status, the test it must pass and
    what was measured (wrapped to ``width`` columns), and raise
    :class:`UnexpectedStatus` unless the status is the one ``expected`` (a
    status, or a tuple of acceptable ones)."""
    results = []
    for id, want in expected.items():
        r = measure(id, module)
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
        if r.status not in ((want,) if isinstance(want, str) else want):
            raise UnexpectedStatus(
                f"claim {id}: status {r.status!r}, expected {want!r} "
                f"({r.detail})"
            )
        results.append(r)
    return results


def summary(results: list[Result]) -> str:
    """Counts of each status, the paper's claims and the book's own apart:
    ``the paper's claims (N measured): 40 reproduced, ...; 1 not
    measured``. A claim not measured yet is not counted."""
    parts = []
    for source, name in SOURCES.items():
        mine = [r for r in results if r.source == source]
        done = [r for r in mine if r.status != "not measured"]
        if mine:
            counts = ", ".join(
                f"{sum(r.status == s for r in done)} {s}"
                for s in STATUSES
                if s != "not measured"
            )
            waiting = len(mine) - len(done)
            parts.append(
                f"{name} ({len(done)} measured): {counts}"
                + (f"; {waiting} not measured yet" if waiting else "")
            )
    return "; ".join(parts)
