"""The grid of a sweep and its tidy table: ``TrainConfig`` fields x values
x seeds (``grid``, or ``python -m lnpower sweep``'s options through
``from_options``), and one row a run (``row``, ``write_table``).
:mod:`lnpower.sweep` trains them."""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
from pathlib import Path

from .config import TrainConfig

# What a tidy row keeps of a run's config (the rest is the paper's setting)
COLUMNS = (
    "task",
    "d",
    "n",
    "model",
    "loops",
    "norm",
    "target",
    "lr",
    "batch",
    "steps",
    "train_size",
    "seed",
)


@dataclasses.dataclass
class Failed:
    """A run that raised: its config and the error, one line."""

    config: TrainConfig
    error: str


def grid(axes: dict[str, list], seeds=(0,), **fixed) -> list[TrainConfig]:
    """Every combination of the values in ``axes`` (``TrainConfig`` field
    -> values) and ``seeds``, with the ``fixed`` settings; an unknown field
    or a bad value raises ``ValueError`` naming it, before any work."""
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    for k in (*axes, *fixed):
        if k not in names:
            raise ValueError(f"{k!r} is not a TrainConfig field")
    if not seeds or any(not v for v in axes.values()):
        raise ValueError("every axis of a sweep needs at least one value")
    keys = list(axes)
    out = []
    for values in itertools.product(*axes.values()):
        for s in seeds:
            kw = {**fixed, **dict(zip(keys, values)), "seed": s}
            try:
                out.append(TrainConfig(**kw))
            except (TypeError, ValueError) as err:
                raise ValueError(f"{kw}: {err}") from None
    return out


def _value(field: str, text: str):
    """``text`` read as the type of ``TrainConfig``'s ``field``."""
    default = TrainConfig.__dataclass_fields__[field].default
    if field in ("m", "snapshot_steps"):
        raise ValueError(f"{field} cannot be swept from the command line")
    if isinstance(default, str):
        return text
    if default is None:  # loops (an integer) or target (a name)
        return int(text) if text.isdigit() else text
    try:
        return type(default)(text)
    except ValueError:
        raise ValueError(
            f"{field}={text!r}: expected a {type(default).__name__}"
        ) from None


def _pair(text: str) -> tuple[str, str]:
    field, sep, value = text.partition("=")
    if not sep or not value:
        raise ValueError(f"expected FIELD=VALUE, got {text!r}")
    if field not in TrainConfig.__dataclass_fields__:
        raise ValueError(f"{field!r} is not a TrainConfig field")
    return field, value


def from_options(name, axes, fixed, seeds, device=None):
    """The configs of ``python -m lnpower sweep``: a named sweep (``where``
    or ``where-subset``) or ``--grid FIELD=V1,V2`` axes with ``--set
    FIELD=V`` settings and ``--seeds``; ``device`` for every run."""
    if name is not None:
        from . import where

        if name not in ("where", "where-subset") or axes or fixed:
            raise ValueError(
                f"unknown sweep {name!r}: name 'where' or 'where-subset', "
                "or give --grid without a name"
            )
        configs = where.configs(full=name == "where")
    elif not axes:
        raise ValueError("give a named sweep or at least one --grid axis")
    else:
        grid_axes = {}
        for text in axes:
            field, values = _pair(text)
            grid_axes[field] = [_value(field, v) for v in values.split(",")]
        kw = {f: _value(f, v) for f, v in map(_pair, fixed)}
        configs = grid(grid_axes, seeds, **kw)
    if device:
        configs = [dataclasses.replace(c, device=device) for c in configs]
    return configs


def row(config: TrainConfig, h) -> dict:
    """One run as a tidy row: its settings, then what it reached at T (or
    its error)."""
    out = {k: getattr(config, k) for k in COLUMNS}
    if isinstance(h, Failed):
        return {**out, "status": "failed", "error": h.error}
    return {
        **out,
        "status": "ok",
        "error": "",
        "train_loss": h.train_loss[-1],
        "test_loss": h.test_loss[-1],
        "w": h.w[-1],
        "v": h.v[-1],
        "product": h.w[-1] * h.v[-1],
        "seconds": h.seconds,
    }


def write_table(rows: list[dict], path) -> Path:
    """The rows as CSV (``.csv``) or JSON (any other suffix), written
    atomically."""
    from .cache import atomic_write

    path = Path(path)
    if path.suffix == ".csv":
        keys = list(dict.fromkeys(k for r in rows for k in r))

        def write(tmp):
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, keys)
                w.writeheader()
                w.writerows(rows)
    else:

        def write(tmp):
            tmp.write_text(json.dumps(rows, indent=1) + "\n")

    return atomic_write(path, write)
