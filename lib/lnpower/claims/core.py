"""The registry: each claim has an id, where it is in the paper, the statement, the paper's
value or prediction, a tolerance and a ``check`` that measures it now.

Statuses: ``reproduced`` (within tolerance), ``partial`` (the trend holds but the stated value is
not reached within the tolerance at the horizon checked), ``not reproduced``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

from .. import cache as _cache

STATUSES = ("reproduced", "partial", "not reproduced")
# The paper's numbered statements: label of the box that states each, and its chapter
STATEMENTS = {"def-3-1": "book/principal_components", "ass-3-2": "book/principal_components",
              "ex-3-3": "book/principal_components", "thm-4-1": "book/looped_power_method",
              "thm-4-2": "book/without_ln", "thm-4-3": "book/with_ln",
              "ass-4-4": "book/out_of_distribution", "thm-4-6": "book/out_of_distribution",
              "thm-4-7": "book/out_of_distribution"}
_KINDS = {"Definition": "def", "Assumption": "ass", "Example": "ex", "Theorem": "thm"}


def statement_name(ref: str) -> str:
    """The paper's name of a statement label: "thm-4-2" -> "Theorem 4.2"."""
    kind, major, minor = ref.split("-")
    names = {v: k for k, v in _KINDS.items()}
    return f"{names[kind]} {major}.{minor}"


def statement_of(where: str) -> str:
    """The label of the first numbered statement named in ``where`` ("Theorem 4.2, Fig. 6"
    -> "thm-4-2"); ``ValueError`` if it names none."""
    m = re.search(r"(Definition|Assumption|Example|Theorems?) (\d)\.(\d)", where)
    if not m:
        raise ValueError(f"{where!r} names no numbered statement; pass ref=")
    return f"{_KINDS[m.group(1).rstrip('s')]}-{m.group(2)}-{m.group(3)}"


@dataclass(frozen=True)
class Claim:
    """One checkable claim. ``source`` is ``"paper"`` or ``"book"`` (the book's own claims)."""

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
    """A claim checked now: the measured value, the status and a one-line detail."""

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

    def as_dict(self) -> dict:
        return asdict(self)


REGISTRY: dict[str, Claim] = {}


def claim(id, where, statement, paper, tolerance, chapter, source="paper", ref=None):
    """Register the decorated function as the check of a claim; it returns
    ``(measured, status, detail)``. ``ref``: the statement box (default: the first numbered
    statement ``where`` names)."""
    ref = ref or statement_of(where)
    if ref not in STATEMENTS:
        raise ValueError(f"claim {id!r}: unknown statement {ref!r}")

    def wrap(fn):
        if id in REGISTRY:
            raise ValueError(f"claim {id!r} registered twice")
        REGISTRY[id] = Claim(id, where, statement, paper, tolerance, chapter, fn, source, ref)
        return fn
    return wrap


def check(id: str, cache=True) -> Result:
    """Check one claim. Its measurement is kept in the disk cache (``lnpower.cache``), keyed by
    the code of the whole library, so a chapter and the reproduction report that check the
    same claim measure it once; any change to the library's code measures it again."""
    if id not in REGISTRY:
        raise ValueError(f"unknown claim {id!r}; known: {sorted(REGISTRY)}")
    c = REGISTRY[id]

    def measure():
        measured, status, detail = c.check()
        if status not in STATUSES:
            raise ValueError(f"claim {id}: bad status {status!r}")
        return [measured, status, detail]

    measured, status, detail = _cache.cached(
        "claim", [id], _cache.PACKAGE, measure,
        lambda out, folder: (folder / "result.json").write_text(json.dumps(out, default=float)),
        lambda folder: json.loads((folder / "result.json").read_text()), cache)
    return Result(c.id, c.where, c.statement, c.paper, measured, c.tolerance, status, detail,
                  c.chapter, c.source, c.ref)


def check_all() -> list[Result]:
    """Check every registered claim, in registration order."""
    return [check(i) for i in REGISTRY]


def verdict(ok: bool) -> str:
    """The status of a claim whose check either passes or fails."""
    return "reproduced" if ok else "not reproduced"


def within(x: float, target: float, rel: float) -> str:
    """``reproduced`` if ``x`` is within ``rel`` (relative) of ``target``."""
    return verdict(abs(x - target) <= rel * abs(target))


def trend_status(values, target: float, tol: float) -> str:
    """``reproduced`` if the last value is within ``tol`` of ``target``; ``partial`` if the
    distance to ``target`` shrinks at every step of the sequence; else ``not reproduced``."""
    dist = [abs(x - target) for x in values]
    if dist[-1] <= tol:
        return "reproduced"
    return "partial" if all(b < a for a, b in zip(dist, dist[1:])) else "not reproduced"


def expect(expected: dict[str, str | tuple[str, ...]], width: int = 78) -> list[Result]:
    """What a chapter runs under its experiments: check each claim now, print its status, the
    test it must pass and what was measured (wrapped to ``width`` columns), and assert the
    status is the one ``expected`` (a status, or a tuple of acceptable ones)."""
    import textwrap

    results = []
    for id, want in expected.items():
        r = check(id)
        print(textwrap.fill(f"{r.id}: {r.status}", width))
        for what, text in (("test", r.tolerance), ("measured", r.detail)):
            print(textwrap.fill(f"{what}: {text}", width, initial_indent="    ",
                                subsequent_indent="      "))
        ok = r.status in ((want,) if isinstance(want, str) else want)
        assert ok, f"claim {id}: status {r.status!r}, expected {want!r} ({r.detail})"
        results.append(r)
    return results


def summary(results: list[Result]) -> str:
    """``N reproduced, M partial, K not reproduced``."""
    return ", ".join(f"{sum(r.status == s for r in results)} {s}" for s in STATUSES)
