"""The registry: each claim has an id, where it is in the paper, the
statement, the paper's value or prediction, a tolerance and a ``check`` that
measures it now.

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

import numpy as np

from .. import cache as _cache

STATUSES = (
    "reproduced",
    "partial",
    "seed-dependent",
    "inconclusive",
    "not reproduced",
)
SOURCES = {"paper": "the paper's claims", "book": "the book's own claims"}
# The paper's numbered statements: label of the box that states each, and its
# chapter
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
    "Definition": "def",
    "Assumption": "ass",
    "Example": "ex",
    "Theorem": "thm",
}


def statement_name(ref: str) -> str:
    """The paper's name of a statement label: "thm-4-2" -> "Theorem 4.2"."""
    kind, major, minor = ref.split("-")
    names = {v: k for k, v in _KINDS.items()}
    return f"{names[kind]} {major}.{minor}"


@dataclass(frozen=True)
class Spread:
    """A claim measured over an ensemble of seeds: the quantity (``values``)
    and whether the paper's sentence holds (``holds``), one entry per seed."""

    values: tuple[float, ...]
    holds: tuple[bool, ...]

    def __post_init__(self):
        if not self.values or len(self.values) != len(self.holds):
            raise ValueError(
                "a Spread needs one value and one verdict per seed"
            )

    @property
    def seeds(self) -> int:
        return len(self.values)

    def quantiles(self) -> tuple[float, float, float]:
        """The median and the 10 % and 90 % quantiles over the seeds."""
        q = np.quantile(np.asarray(self.values, dtype=float), [0.5, 0.1, 0.9])
        return float(q[0]), float(q[1]), float(q[2])

    @property
    def passed(self) -> int:
        """How many seeds the sentence holds for."""
        return sum(map(bool, self.holds))

    @property
    def fraction(self) -> float:
        """The fraction of seeds for which the sentence holds."""
        return self.passed / self.seeds

    def status(self) -> str:
        """All seeds: reproduced; none: not reproduced; some:
        seed-dependent."""
        return (
            "reproduced"
            if self.passed == self.seeds
            else "not reproduced"
            if self.passed == 0
            else "seed-dependent"
        )

    def text(self) -> str:
        m, lo, hi = self.quantiles()
        return (
            f"{self.seeds} seeds: median {m:.4g} (10-90 %: {lo:.4g} to "
            f"{hi:.4g}); "
            f"holds for {self.passed} of {self.seeds}"
        )

    def as_dict(self) -> dict:
        m, lo, hi = self.quantiles()
        return {
            "seeds": self.seeds,
            "median": m,
            "q10": lo,
            "q90": hi,
            "fraction": self.fraction,
        }


def over_seeds(
    values, holds, detail: str = ""
) -> tuple[float, str, str, Spread]:
    """What an ensemble claim's check returns: the median, the status by
    :meth:`Spread.status`, the detail (prefixed by the spread) and the
    spread."""
    sp = Spread(tuple(float(v) for v in values), tuple(bool(h) for h in holds))
    text = sp.text() + (f"; {detail}" if detail else "")
    return round(sp.quantiles()[0], 4), sp.status(), text, sp


def ordering(rows: dict[str, list[float]]) -> tuple[str, str]:
    """Status of "the rows are in decreasing order", each row a quantity
    over the same seeds: ``reproduced`` if every seed has the order and each
    consecutive pair's medians differ by more than the 10-90 % spread of
    either; ``inconclusive`` if the medians are in order but some difference
    is within that spread; ``seed-dependent`` if the medians are in order
    and some seed is not; else ``not reproduced``. Returns the status and a
    line."""
    names, arr = list(rows), np.array([rows[k] for k in rows], dtype=float)
    med = np.median(arr, axis=1)
    width = np.quantile(arr, 0.9, axis=1) - np.quantile(arr, 0.1, axis=1)
    per_seed = np.all(arr[:-1] > arr[1:], axis=0)
    in_order = bool(np.all(med[:-1] > med[1:]))
    clear = bool(
        np.all(med[:-1] - med[1:] > np.maximum(width[:-1], width[1:]))
    )
    status = (
        "not reproduced"
        if not in_order
        else "inconclusive"
        if not clear
        else "reproduced"
        if per_seed.all()
        else "seed-dependent"
    )
    line = ", ".join(
        f"{k} {m:.4g} ({w:.2g} wide)" for k, m, w in zip(names, med, width)
    )
    return (
        status,
        f"medians {line}; ordered for {int(per_seed.sum())} of {arr.shape[1]} "
        "seeds",
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


REGISTRY: dict[str, Claim] = {}


def _module(fn) -> str:
    """The library module that defines ``fn``, as ``lnpower.cache`` names
    it; ``claims/core`` for a check defined outside the library."""
    if not fn.__module__.startswith("lnpower."):
        return "claims/core"
    return fn.__module__.removeprefix("lnpower.").replace(".", "/")


def claim(
    *,
    id: str,
    ref: str,
    where: str,
    statement: str,
    paper: str,
    tolerance: str,
    chapter: str,
    source: str = "paper",
):
    """Register the decorated function as the check of a claim; it returns
    ``(measured, status, detail)`` or :func:`over_seeds`'s four. The fields:

    - ``id``: the claim's name in the ledger;
    - ``ref``: the label of the numbered statement the claim is about
      (:data:`STATEMENTS`);
    - ``where``: where in the paper (or the book) the sentence is;
    - ``statement``: the sentence checked; ``paper``: the paper's own words
      or value; ``tolerance``: the test it must pass;
    - ``chapter``: the one chapter that expects the claim's status;
    - ``source``: ``"paper"`` or ``"book"`` (:data:`SOURCES`).
    """
    if ref not in STATEMENTS:
        raise ValueError(
            f"claim {id!r}: unknown statement {ref!r}; "
            f"known: {sorted(STATEMENTS)}"
        )
    if source not in SOURCES:
        raise ValueError(
            f"claim {id!r}: source {source!r} is not one of {sorted(SOURCES)}"
        )

    def wrap(fn):
        if id in REGISTRY:
            raise ValueError(f"claim {id!r} registered twice")
        REGISTRY[id] = Claim(
            id, where, statement, paper, tolerance, chapter, fn, source, ref
        )
        return fn

    return wrap


def check(id: str, cache=True) -> Result:
    """Check one claim. Its measurement is kept in the disk cache
    (``lnpower.cache``), keyed by the code of the module that declares it
    and of every library module that module imports
    (:func:`lnpower.cache.closure`), so a chapter and the reproduction
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


def verdict(ok: bool) -> str:
    """The status of a claim whose check either passes or fails."""
    return "reproduced" if ok else "not reproduced"


def within(x: float, target: float, rel: float) -> str:
    """``reproduced`` if ``x`` is within ``rel`` (relative) of ``target``."""
    return verdict(abs(x - target) <= rel * abs(target))


def trend_status(values, target: float, tol: float) -> str:
    """``reproduced`` if the last value is within ``tol`` of ``target``;
    ``partial`` if the distance to ``target`` shrinks at every step of the
    sequence; else ``not reproduced``."""
    dist = [abs(x - target) for x in values]
    if dist[-1] <= tol:
        return "reproduced"
    return (
        "partial"
        if all(b < a for a, b in zip(dist, dist[1:]))
        else "not reproduced"
    )


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
