"""The status rules of the claims: the statuses, the spread of a claim over
a seed ensemble and its rule (:meth:`Spread.status`), orderings
(:func:`ordering`), and the verdicts of single measurements.

The rules, written down:

- a single measurement: ``reproduced`` within the tolerance, else ``not
  reproduced`` (:func:`verdict`, :func:`within`); a quantity that should
  tend to a value: ``partial`` if its distance to the value shrinks at every
  step of the horizon but is still above the tolerance at its end
  (:func:`trend_status`);
- over a seed ensemble (:meth:`Spread.status`): ``reproduced`` if the
  sentence holds for every seed; ``partial`` if it holds for none or some
  but a weaker form, the trend towards it, holds for every seed; ``not
  reproduced`` if neither holds for any seed; ``seed-dependent`` otherwise;
- an ordering (:func:`ordering`): ``inconclusive`` where the medians are in
  order but a gap between them is within the 10-90 % spread over seeds (of
  the ensemble itself, or, for one seed, of the same quantity's ensemble at
  the other reading of T);
- ``not measured``: the data are not there yet (a long run still being
  trained); such a claim is listed and not counted."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

STATUSES = (
    "reproduced",
    "partial",
    "seed-dependent",
    "inconclusive",
    "not reproduced",
    "not measured",
)


@dataclass(frozen=True)
class Spread:
    """A claim measured over an ensemble of seeds: the quantity (``values``),
    whether the paper's sentence holds (``holds``) and, optionally, whether
    its weaker form, the trend towards it, holds (``trend``), one entry per
    seed."""

    values: tuple[float, ...]
    holds: tuple[bool, ...]
    trend: tuple[bool, ...] | None = None

    def __post_init__(self):
        n = len(self.values)
        if not n or len(self.holds) != n or len(self.trend or self.holds) != n:
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
        """The sentence holds for every seed: reproduced; the trend holds
        for every seed (and the sentence not): partial; neither holds for
        any seed: not reproduced; otherwise seed-dependent."""
        trend = [bool(t) for t in (self.trend or self.holds)]
        if self.passed == self.seeds:
            return "reproduced"
        if all(trend):
            return "partial"
        if self.passed == 0 and not any(trend):
            return "not reproduced"
        return "seed-dependent"

    def text(self, quantity: str) -> str:
        """``quantity`` per seed, its median and spread over the seeds,
        and for how many the sentence holds."""
        m, lo, hi = self.quantiles()
        return (
            f"{quantity}, per seed: median {m:.4g} (10-90 %: {lo:.4g} to "
            f"{hi:.4g}) over {self.seeds} seeds; "
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
    values, holds, *, quantity: str, detail: str = "", trend=None
) -> tuple[float, str, str, Spread]:
    """What an ensemble claim's check returns: the median, the status by
    :meth:`Spread.status`, the detail (``quantity``, what one value per seed
    is, then the spread, then ``detail``) and the spread. ``trend``: per
    seed, whether the weaker form holds."""
    if not quantity:
        raise ValueError("over_seeds needs the quantity its values measure")
    sp = Spread(
        tuple(float(v) for v in values),
        tuple(bool(h) for h in holds),
        None if trend is None else tuple(bool(t) for t in trend),
    )
    text = sp.text(quantity) + (f"; {detail}" if detail else "")
    return round(sp.quantiles()[0], 4), sp.status(), text, sp


def ordering(
    rows: dict[str, list[float]], widths: dict[str, float] | None = None
) -> tuple[str, str]:
    """Status of "the rows are in decreasing order", each row a quantity
    over the same seeds: ``reproduced`` if every seed has the order and each
    consecutive pair's medians differ by more than the 10-90 % spread of
    either; ``inconclusive`` if the medians are in order but some difference
    is within that spread; ``seed-dependent`` if the medians are in order
    and some seed is not; else ``not reproduced``. ``widths`` (per row)
    replaces the rows' own spread: for a quantity measured on one seed, the
    spread of the same quantity over an ensemble measured elsewhere (the
    other reading of T). Returns the status and a line."""
    names, arr = list(rows), np.array([rows[k] for k in rows], dtype=float)
    med = np.median(arr, axis=1)
    width = np.quantile(arr, 0.9, axis=1) - np.quantile(arr, 0.1, axis=1)
    if widths is not None:
        width = np.array([widths[k] for k in names], dtype=float)
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


def not_measured(what: str) -> tuple[str, str, str]:
    """What a claim's check returns when its data are not there yet."""
    return "not measured", "not measured", what
