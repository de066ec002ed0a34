"""SGD runs stored with the library, because they take too long to train
in a chapter: at the epoch reading of the paper's T (2000 passes without
replacement over the 10 000 training samples, 156 000 iterations;
``lnpower.config.T_READINGS``) the LN layer (at Fig. 3's configurations
too), the layer without LN on both targets and the looped model; and at the
iteration reading (T = 2000) the looped model's seed ensemble, with and
without LN, which takes minutes where a layer takes seconds.

Each run is kept as a compressed history in ``lnpower/stored_runs/``
(``lnpower.cache.STORED``): the active weights at every step (float32), the
losses at the logged steps (and, at the iteration reading, every
minibatch's), the weights at Fig. 5's snapshots and at every logged step of
the looped model, and a JSON record of its key (:func:`lnpower.train.run_key`,
the key the training cache uses), its configuration, the machine and the
wall time.
:func:`load` refuses a stored run whose key is not what the code asks for
now, and :func:`lookup` finds a run by its key, so that
:func:`lnpower.chapters.ensembles.paper_runs` loads a stored run instead
of training it. ``python -m lnpower stored-runs`` trains them again (or
takes them from the training cache, where the same key holds the same
numbers) and writes them there, under the seed base of ``LNPOWER_SEED``.
The runs at the epoch reading are stored for the default base only (seed
0, and the looped model's seeds as far as stored); the looped model's
ensemble at the iteration reading for the default base and the two shifted
ones the book is checked under (``LNPOWER_SEED=1`` and ``2``), seeds 0 to
2 with LN and without LN the seeds that train: the third diverges (seed 2
under bases 0 and 2, seed 1 under base 1) and is not stored, so a chapter
that asks for it trains it to its divergence. Under any other base, the
ensemble is trained.

After a new ``NUMBERS``, the runs are stored again with, from a clone,
``PYTHONPATH=lib python -m lnpower stored-runs`` (every set, seed 0, the
default base), then for each base k in 0, 1, 2: ``LNPOWER_SEED=k ... --name
looped-iterations --seed 0 1 2`` and ``--name looped-no-ln-iterations
--seed`` with the seeds that train.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch

from .. import cache as _cache
from .. import seeding
from ..cache import memo
from ..config import (
    FIG3_GRID,
    FIG5_SNAPSHOTS,
    PAPER,
    TrainConfig,
    paper_config,
)
from ..history import History
from ..tasks import tasks_at
from ..train import fit_many, run_key

# Fig. 5's snapshots and T, read as epochs
EPOCHS = (*FIG5_SNAPSHOTS, PAPER.steps)
# name -> the set's settings beside the paper's, and its reading of T
SETS = {
    "layer": ({}, "epochs"),
    "no-ln-normalized": ({"norm": "none", "target": "normalized"}, "epochs"),
    "no-ln-unnormalized": (
        {"norm": "none", "target": "unnormalized"},
        "epochs",
    ),
    "looped": ({"model": "looped"}, "epochs"),
    "looped-iterations": ({"model": "looped"}, "iterations"),
    "looped-no-ln-iterations": (
        {"model": "looped", "norm": "none"},
        "iterations",
    ),
}
# Fig. 3's other (d, n), the LN layer; its (16, 32) is "layer"
SETS.update(
    {
        f"fig3-d{d}-n{n}": ({"d": d, "n": n}, "epochs")
        for d, n in FIG3_GRID
        if (d, n) != (PAPER.d, PAPER.n)
    }
)


def tasks_of(name: str) -> tuple[str, ...]:
    """The tasks a stored set trains (:func:`lnpower.tasks.tasks_at`)."""
    o = SETS[name][0]
    return tasks_at(o.get("d", PAPER.d), o.get("n", PAPER.n))


def configs(name: str, seed: int = 0) -> list[TrainConfig]:
    """The runs (Task 1, and Task 2 where it exists) of a stored set, as the
    code asks for them now."""
    if name not in SETS:
        raise ValueError(f"unknown stored run {name!r}; known: {sorted(SETS)}")
    overrides, reading = SETS[name]
    if reading == "iterations":  # as the chapters ask for them
        return [
            paper_config(task=t, seed=seed, **overrides)
            for t in tasks_of(name)
        ]
    steps = [PAPER.epoch_steps(e) for e in EPOCHS]
    return [
        paper_config(
            task=t,
            seed=seed,
            sampling="epochs",
            steps=steps[-1],
            snapshot_steps=tuple(steps[:-1]),
            log_points=60,
            **overrides,
        )
        for t in tasks_of(name)
    ]


def _cpu() -> str:
    """The processor's model name (Linux), else the architecture."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _path(name: str, task: str, seed: int, shift: int = 0) -> Path:
    base = f"-shift{shift}" if shift else ""
    return _cache.STORED / f"{name}-{task}-seed{seed}{base}"


def _snapshot_steps(c: TrainConfig) -> list[int]:
    """The steps whose weights a stored run keeps: Fig. 5's snapshots and
    T, and for the looped model every logged step (the heat maps over
    training)."""
    steps = {*c.snapshot_steps, c.steps}
    if c.model == "looped":
        steps |= set(c.schedule())
    return sorted(steps)


def save(h: History, name: str, shift: int = 0) -> Path:
    """Write one run, trained under the seed shift ``shift``, (``.npz``
    and ``.json``) beside the library."""
    c = h.config
    path = _path(name, c.task, c.seed, shift)
    path.parent.mkdir(parents=True, exist_ok=True)
    snaps = _snapshot_steps(c)
    arrays = {
        "w": np.float32(h.w),
        "v": np.float32(h.v),
        "steps": np.int64(h.steps),
        "train_loss": np.float64(h.train_loss),
        "test_loss": np.float64(h.test_loss),
        **{f"W{t}": h.snapshots[t][0].numpy() for t in snaps},
        **{f"V{t}": h.snapshots[t][1].numpy() for t in snaps},
    }
    if SETS[name][1] == "iterations":  # every step's loss (not 156 000)
        arrays["batch_loss"] = np.float32(h.batch_loss)
    _cache.atomic_write(
        path.with_suffix(".npz"),
        lambda tmp: np.savez_compressed(open(tmp, "wb"), **arrays),
    )
    record = {
        "key": run_key(c, shift),
        "config": dataclasses.asdict(c),
        "machine": f"{_cpu()}, {os.cpu_count()} cores, {platform.system()}",
        "torch": torch.__version__,
        "wall_seconds": round(h.seconds, 1),
        "date": time.strftime("%Y-%m-%d"),
    }
    _cache.atomic_write(
        path.with_suffix(".json"),
        lambda tmp: tmp.write_text(json.dumps(record, indent=1) + "\n"),
    )
    return path


def record(name: str, task: str = "sphere", seed: int = 0) -> dict:
    """The JSON record of a stored run (``FileNotFoundError`` naming the
    command that makes it, if it is not there)."""
    path = _path(name, task, seed).with_suffix(".json")
    if not path.exists():
        raise FileNotFoundError(
            f"no stored run {path.name}; make it with "
            f"`python -m lnpower stored-runs --name {name}`"
        )
    return json.loads(path.read_text())


def check(name: str, seed: int = 0) -> None:
    """``ValueError`` unless every stored run of ``name`` has the key the
    code asks for now (:func:`lnpower.train.run_key`: the numbers version
    of the training code and the configuration)."""
    for c in configs(name, seed):
        stored, now = record(name, c.task, seed)["key"], run_key(c, shift=0)
        if stored != now:
            raise ValueError(
                f"stored run {name}/{c.task} has the key {stored}, the code "
                f"asks for {now}; run `python -m lnpower stored-runs --name "
                f"{name}`"
            )


def exists(name: str, seed: int = 0) -> bool:
    """Whether every run of the stored set ``name`` is there with the key
    the code asks for now."""
    try:
        check(name, seed)
    except (FileNotFoundError, ValueError):
        return False
    return True


def _read(path: Path, c: TrainConfig) -> History:
    """The history stored at ``path`` (no suffix) of the run ``c``: the
    trained one's, but for the time spent evaluating and, at the epoch
    reading, the minibatch losses (and for the layer the weights between
    the snapshots), which are not stored."""
    z = np.load(path.with_suffix(".npz"))
    snaps = {
        t: (torch.from_numpy(z[f"W{t}"]), torch.from_numpy(z[f"V{t}"]))
        for t in _snapshot_steps(c)
    }
    return History(
        config=c,
        steps=z["steps"].tolist(),
        train_loss=z["train_loss"].tolist(),
        test_loss=z["test_loss"].tolist(),
        w=z["w"].tolist(),
        v=z["v"].tolist(),
        batch_loss=(
            z["batch_loss"].tolist() if "batch_loss" in z.files else []
        ),
        snapshots=snaps,
        seconds=json.loads(path.with_suffix(".json").read_text())[
            "wall_seconds"
        ],
    )


@memo
def load(name: str, seed: int = 0) -> dict[str, list[History]]:
    """The stored runs of ``name`` as histories, ``{task: [history]}`` (one
    seed), after :func:`check`."""
    check(name, seed)
    return {
        c.task: [_read(_path(name, c.task, seed), c)]
        for c in configs(name, seed)
    }


def lookup(c: TrainConfig, shift: int | None = None) -> History | None:
    """The stored run whose key is ``c``'s (:func:`lnpower.train.run_key`
    under the seed shift ``shift``, default ``LNPOWER_SEED``), or
    ``None``."""
    key = run_key(c, shift)
    for path in sorted(_cache.STORED.glob("*-seed*.json")):
        if json.loads(path.read_text())["key"] == key:
            return _read(path.with_suffix(""), c)
    return None


def regenerate(
    names=tuple(SETS),
    seed: int = 0,
    progress: bool | None = None,
    shift: int | None = None,
) -> list[Path]:
    """Train the stored runs again (the tasks of a set together) under the
    seed shift ``shift`` (default ``LNPOWER_SEED``) and write them; a run
    the training cache holds under the same key, hence with the same
    numbers, is taken from there."""
    shift = seeding.shift() if shift is None else shift
    epochs = [n for n in names if SETS[n][1] == "epochs"]
    if shift and epochs:
        raise ValueError(
            f"the runs at the epoch reading ({', '.join(epochs)}) are stored "
            "for the default seed base only: unset LNPOWER_SEED"
        )
    paths = []
    for name in names:
        hist = fit_many(configs(name, seed), progress, cache=True, shift=shift)
        paths += [save(h, name, shift) for h in hist]
    return paths
