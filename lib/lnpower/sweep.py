"""Grids of training runs on ``dask.distributed``: ``python -m lnpower
sweep``.

A sweep is a list of ``TrainConfig``: every combination of values of some
fields, and seeds (:func:`grid`, or the command line's options through
:func:`from_options`); its result is a tidy table, one row a run
(:func:`row`, :func:`write_table`). Runs that share their shapes are
trained together by :func:`lnpower.train.fit_many` in groups of at most
``group_size``, one dask task per group. The histories come back to the
client, which stores each run in the training cache under its key
(:func:`lnpower.train.run_key`), so that workers need no shared disk,
a sweep started again trains only the runs not yet in the cache, and a
chapter that asks for one of its runs reads it. A run trained in a group has
the same numbers as alone (bit for bit on the CPU; tested).

A group that raises is trained again run by run, so that a failed run is
reported with its config and loses nothing else.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import os
import time
from pathlib import Path

from . import cache as _cache
from . import seeding
from .config import TrainConfig
from .devices import available_memory
from .history import History
from .train import fit_many, run_key

# What a tidy row keeps of a run's config (the rest is the paper's setting)
COLUMNS = (
    "task", "d", "n", "model", "loops", "norm", "target", "lr", "batch",
    "steps", "train_size", "seed",
)  # fmt: skip


@dataclasses.dataclass
class Failed:
    """A run that raised: its config and the error, one line."""

    config: TrainConfig
    error: str


def is_cached(config: TrainConfig, cache=True) -> bool:
    """Whether ``fit(config, cache=cache)`` would read its run from the
    cache."""
    return _cache.exists("fit", run_key(config), cache)


def store(config: TrainConfig, history: History, cache=True) -> None:
    """Put a run trained by a worker into the cache, where ``fit(config,
    cache=cache)`` reads it."""
    _cache.put("fit", run_key(config), history, History.save, cache)


def groups(
    configs: list[TrainConfig], size: int, work: float | None = None
) -> list[list[int]]:
    """Indices of ``configs`` in groups that ``fit_many`` can train
    together (one shape), at most ``size`` runs and, beyond one run, about
    ``work`` (:func:`cost`) each, in the order given."""
    by_shape: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        by_shape.setdefault(c.shape_key(), []).append(i)
    out = []
    for idx in by_shape.values():
        k = size
        if work is not None:
            k = max(1, min(size, int(work // cost(configs[idx[0]]))))
        out += [idx[j : j + k] for j in range(0, len(idx), k)]
    return out


def check_memory(configs, plan, workers: int) -> None:
    """Refuse, in one line and before any work, a sweep whose ``workers``
    largest groups cannot fit in memory together."""
    need = sorted(configs[g[0]].memory_bytes(len(g)) for g in plan)
    need = sum(need[-workers:])
    have = available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"the sweep needs about {need / 2**30:.1f} GiB of memory with "
            f"{workers} workers, {have / 2**30:.1f} GiB is available: use "
            "fewer workers, a smaller --group or smaller runs"
        )


def train_group(configs: list[TrainConfig], shift: int) -> list:
    """On a worker: the group's histories under the client's seed shift, or,
    if it raises, each run trained alone (a History or a
    :class:`Failed`)."""
    try:
        return fit_many(configs, progress=False, shift=shift)
    except Exception:
        return [_alone(c, shift) for c in configs]


def _alone(config: TrainConfig, shift: int):
    try:
        return fit_many([config], progress=False, shift=shift)[0]
    except Exception as err:
        return Failed(config, f"{type(err).__name__}: {err}")


def run(
    configs: list[TrainConfig],
    scheduler: str | None = None,
    workers: int | None = None,
    group_size: int = 8,
    cache=True,
    progress: bool = True,
) -> list:
    """Train ``configs`` on a ``LocalCluster`` of ``workers`` processes
    (default: one per core) or on the dask scheduler at ``scheduler``;
    runs already in the cache are read, not trained. Returns one History
    or :class:`Failed` per config, in order."""
    from dask.distributed import Client, LocalCluster, as_completed

    results: list = [None] * len(configs)
    todo = []
    for i, c in enumerate(configs):
        if cache and is_cached(c, cache):
            results[i] = fit_many([c], progress=False, cache=cache)[0]
        else:
            todo.append(i)
    if not todo:
        return results
    workers = workers or os.cpu_count() or 1
    # groups of at most an eighth of a worker's share of the work, so that
    # the largest runs do not end the sweep on one worker
    fresh = [configs[i] for i in todo]
    share = sum(map(cost, fresh)) / (8 * workers)
    plan = [[todo[k] for k in g] for g in groups(fresh, group_size, share)]
    plan.sort(key=lambda g: -cost(configs[g[0]], len(g)))  # largest first
    check_memory(configs, plan, 1 if scheduler else workers)
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
    try:
        client = Client(scheduler or cluster)
    except OSError as err:  # nothing listens there, or it does not answer
        if cluster is not None:
            cluster.close()
        raise ValueError(
            f"no dask scheduler answers at {scheduler or 'the local cluster'}"
            f" ({type(err).__name__}: {str(err).splitlines()[0]})"
        ) from None
    try:
        futures = {
            client.submit(
                train_group,
                [configs[i] for i in g],
                seeding.shift(),
                pure=False,
            ): g
            for g in plan
        }
        t0, done, work = time.perf_counter(), len(configs) - len(todo), 0.0
        total = sum(cost(configs[g[0]], len(g)) for g in plan)
        for fut in as_completed(futures):
            g = futures[fut]
            try:
                out = fut.result()
            except Exception as err:  # a lost worker, not the run
                out = [
                    Failed(configs[i], f"{type(err).__name__}: {err}")
                    for i in g
                ]
            for i, h in zip(g, out):
                results[i] = h
                if isinstance(h, History) and cache:
                    store(configs[i], h, cache)
            done += len(g)
            work += cost(configs[g[0]], len(g))
            if progress:
                _report(work, total, f"{done}/{len(configs)}", t0)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return results


def cost(config: TrainConfig, runs: int = 1) -> float:
    """A run's work, roughly (multiply-adds of its SGD steps): the order
    in which groups are sent, largest first, and the time left."""
    c = config
    return runs * c.steps * c.batch * c.loops * (2 * c.d) ** 2 * (c.n + 1)


def _report(done: float, total: float, runs: str, t0: float) -> None:
    """One progress line: runs done of total, time to finish (from the
    work done so far)."""
    spent = time.perf_counter() - t0
    left = spent / done * (total - done) if done else float("nan")
    print(
        f"sweep: {runs} runs, {spent:.0f} s, about {left:.0f} s to go",
        flush=True,
    )


# --- the grid and its table


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


def from_options(axes, fixed, seeds, device=None) -> list[TrainConfig]:
    """The configs of ``python -m lnpower sweep --grid FIELD=V1,V2`` (axes,
    repeatable) with ``--set FIELD=V`` settings and ``--seeds``; ``device``
    for every run."""
    if not axes:
        raise ValueError("give a named sweep or at least one --grid axis")
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

    return _cache.atomic_write(path, write)
