"""Grids of training runs on ``dask.distributed``: ``python -m lnpower
sweep``.

A sweep is a list of ``TrainConfig``. Runs that share their shapes are
trained together by :func:`lnpower.train.fit_many` in groups of at most
``group_size``, one dask task per group. The histories come back to the
client, which stores each run in the training cache under the key
``fit(config, cache=True)`` would use, so that workers need no shared disk,
a sweep started again trains only the runs not yet in the cache, and a
chapter that asks for one of its runs reads it. A run trained in a group has
the same numbers as alone (bit for bit on the CPU; tested).

A group that raises is trained again run by run, so that a failed run is
reported with its config and loses nothing else.
"""

from __future__ import annotations

import dataclasses
import os
import time

from . import cache as _cache
from . import seeding
from .config import TrainConfig, available_memory

# the grid and the table, re-exported: sweep.grid(...), sweep.row(...)
from .grid import (  # noqa: F401
    COLUMNS,
    Failed,
    from_options,
    grid,
    row,
    write_table,
)
from .history import History
from .train import TRAINING_MODULES, fit_many, norm_fingerprint


def _entry(config: TrainConfig):
    """The cache entry ``fit(config, cache=True)`` reads (as
    :func:`lnpower.train.fit_many` names it for one run)."""
    inputs = [[dataclasses.asdict(config)], norm_fingerprint(config.norm)]
    return "fit", inputs, TRAINING_MODULES


def _save(hist: list[History], folder) -> None:
    for r, h in enumerate(hist):
        h.save(folder / str(r))


def is_cached(config: TrainConfig, cache=True) -> bool:
    """Whether ``fit(config, cache=cache)`` would read its run from the
    cache."""
    return _cache.exists(*_entry(config), cache)


def store(config: TrainConfig, history: History, cache=True) -> None:
    """Put a run trained by a worker into the cache, where ``fit(config,
    cache=cache)`` reads it."""
    _cache.put(*_entry(config), [history], _save, cache)


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
    """On a worker: the group's histories, or, if it raises, each run
    trained alone (a History or a :class:`~lnpower.grid.Failed`)."""
    os.environ[seeding.ENV] = str(shift)  # the client's seed shift
    try:
        return fit_many(configs, progress=False)
    except Exception:
        return [_alone(c) for c in configs]


def _alone(config: TrainConfig):
    try:
        return fit_many([config], progress=False)[0]
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
    or :class:`~lnpower.grid.Failed` per config, in order."""
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
    client = Client(scheduler or cluster)
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
