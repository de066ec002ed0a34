"""Training by plain SGD, as in §5 (or Adam, beyond the paper):
``TrainConfig`` -> ``fit`` -> ``History``.

Several runs that share shapes (d, n, L, batch, T, target, LN) can be
trained as one batched computation with ``fit_many``; each run keeps its own
data, seed and step size, and gets the same numbers as when trained alone.
A run is cached under its key (:func:`run_key`), the one key of a training
run that the cache, sweeps and the stored runs all use.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
import time

import numpy as np
import torch

from . import cache as _cache
from . import engine, norms, optimisers, seeding
from .config import DTYPES, MODEL_DEFAULTS, TrainConfig
from .devices import available_memory, resolve_device
from .history import History
from .model import active_weights, structured
from .tasks import embed, generator, targets

# one seed each, from the run's seed
STREAMS = ("train", "test", "batches", "init", "eval")
# The numbers version of the training code. Bump it whenever a change to
# the code or to a default of TrainConfig changes any run's numbers:
# tests/test_numbers.py fails until then. Runs cached or stored under another
# version are trained again; refactoring that keeps the numbers keeps them.
NUMBERS = 1


def run_key(config: TrainConfig, shift: int | None = None) -> str:
    """The key of a training run, readable: the numbers version, the seed
    shift (``LNPOWER_SEED`` unless given) and every setting that differs
    from its default (L and the target from the model's), in the config's
    order, e.g.
    ``numbers=1,shift=0,task=rotated,model=looped,seed=2`` (a run of
    ``paper_config`` adds ``snapshot_steps=100+300``). A normalisation
    registered from outside the library adds a hash of its source.

    Why a numbers version rather than a hash of the code: moving or tidying
    the training code keeps every cached and stored run (a stored run at the
    epoch reading costs up to an hour), while tests/test_numbers.py makes a
    change of numbers without a new version fail. A field added to
    ``TrainConfig`` whose default keeps the old numbers changes no key."""
    # L and the target default per model (MODEL_DEFAULTS); the rest not
    default, own = TrainConfig(), TrainConfig(model=config.model)
    settings = {
        f.name: getattr(config, f.name)
        for f in dataclasses.fields(config)
        if getattr(config, f.name)
        != getattr(own if f.name in MODEL_DEFAULTS[config.model] else default,
                   f.name)
    }  # fmt: skip
    if config.norm != "none" and norms.module_of(config.norm) is None:
        code = norms.source(config.norm).encode()
        settings["norm_code"] = hashlib.sha256(code).hexdigest()[:12]
    shift = seeding.shift() if shift is None else shift
    return _cache.readable_key(numbers=NUMBERS, shift=shift, **settings)


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared during training."""


def seeds(seed: int) -> dict[str, int]:
    """Independent seeds for each random stream of a run (``STREAMS``) from
    its one seed."""
    children = np.random.SeedSequence(seed).spawn(len(STREAMS))
    return {
        name: int(s.generate_state(1)[0]) for name, s in zip(STREAMS, children)
    }


def dataset(config: TrainConfig, which: str, shift: int | None = None):
    """The embedded data ``E`` ``(K, 2d, n+1)`` and targets of the training
    or test set."""
    size = config.train_size if which == "train" else config.test_size
    X, a = config.make_task().sample(
        size, generator(seeds(config.seed)[which], shift=shift)
    )
    dtype, dev = DTYPES[config.dtype], resolve_device(config.device)
    return embed(X, a).to(dev, dtype), targets(X, a, config.target).to(
        dev, dtype
    )


def eval_indices(
    config: TrainConfig, shift: int | None = None
) -> torch.Tensor:
    """The fixed subset of the training set on which the training loss is
    recorded."""
    if config.eval_size >= config.train_size:
        return torch.arange(config.train_size)
    g = generator(seeds(config.seed)["eval"], shift=shift)
    return torch.randperm(config.train_size, generator=g)[: config.eval_size]


def initial_weights(config: TrainConfig, shift: int | None = None):
    """Theorem 4.1's initialisation W = 0, V21 = v0 I, plus optional N(0,
    init_scale^2) noise in every entry (Part V's random initialisation;
    seeded by the run's seed)."""
    W, V = structured(config.d, 0.0, config.v0)
    if config.init_scale > 0:
        g = generator(seeds(config.seed)["init"], shift=shift)
        W = W + config.init_scale * torch.randn(
            W.shape, generator=g, dtype=W.dtype
        )
        V = V + config.init_scale * torch.randn(
            V.shape, generator=g, dtype=V.dtype
        )
    return W, V


def fit(
    config: TrainConfig, progress: bool | None = None, cache=None
) -> History:
    """Train one run and return its ``History`` (see :func:`fit_many`)."""
    return fit_many([config], progress, cache)[0]


def fit_many(
    configs: list[TrainConfig],
    progress: bool | None = None,
    cache=None,
    wait: bool = True,
    shift: int | None = None,
) -> list[History]:
    """Train independent runs as one batched computation (same numbers as
    one by one).

    ``cache`` (a folder, or ``True`` for the default, see
    ``lnpower.cache.directory``) keeps each run under its :func:`run_key`,
    so that another chapter asking for a run loads it instead; only the
    runs not there yet are trained. ``wait=False`` raises
    ``lnpower.cache.Busy`` if another process is training one of them now.
    ``shift``: the seed shift (default ``LNPOWER_SEED``)."""
    if not configs:
        raise ValueError("fit_many needs at least one TrainConfig")
    c0 = configs[0]
    if any(c.shape_key() != c0.shape_key() for c in configs):
        raise ValueError(
            "runs trained together must share every setting but the task, "
            "seed, lr, v0 and init_scale"
        )
    shift = seeding.shift() if shift is None else shift
    return _cache.cached_many(
        "fit",
        [run_key(c, shift) for c in configs],
        lambda todo: _train([configs[i] for i in todo], progress, shift),
        lambda h, folder: h.save(folder),
        History.load,
        cache,
        wait,
    )


def _check_memory(configs: list[TrainConfig]) -> None:
    need, have = configs[0].memory_bytes(len(configs)), available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"training needs about {need / 2**30:.1f} GiB of memory, "
            f"{have / 2**30:.1f} GiB is available: use smaller train_size, "
            "test_size, batch or loops"
        )


def _train(
    configs: list[TrainConfig], progress: bool | None, shift: int
) -> list[History]:
    """The loop of :func:`fit_many`, without the cache."""
    _check_memory(configs)
    c0 = configs[0]
    dev, dtype = resolve_device(c0.device), DTYPES[c0.dtype]
    train = [dataset(c, "train", shift) for c in configs]
    test = [dataset(c, "test", shift) for c in configs]
    sub = [eval_indices(c, shift).to(dev) for c in configs]
    E_tr, Y_tr = (torch.stack(x) for x in zip(*train))
    E_ev = torch.stack([e[i] for (e, _), i in zip(train, sub)])
    Y_ev = torch.stack([y[i] for (_, y), i in zip(train, sub)])
    E_te, Y_te = (torch.stack(x) for x in zip(*test))
    W, V = (
        torch.stack(t).to(dev, dtype)
        for t in zip(*(initial_weights(c, shift) for c in configs))
    )
    lr = torch.tensor([c.lr for c in configs], dtype=dtype, device=dev)[
        :, None, None
    ]
    batch_gens = [
        generator(seeds(c.seed)["batches"], shift=shift) for c in configs
    ]
    update = optimisers.adam if c0.optimizer == "adam" else optimisers.sgd
    step = update(W, V, lr)
    model = engine.Model(c0.loops, c0.norm, c0.target)
    take_E, take_Y = (
        optimisers.Batcher(E_tr, c0.batch),
        optimisers.Batcher(Y_tr, c0.batch),
    )
    hist = [History(config=c) for c in configs]
    logged = set(c0.schedule())
    # per-step records in buffers allocated once: a small tensor kept at
    # every step, between the engine's large temporaries, fragments the
    # heap (a 156 000-step looped run grew past 20 GB that way)
    R = len(configs)
    ws, vs = (torch.empty(c0.steps + 1, R, dtype=dtype) for _ in "wv")
    batch_losses = torch.empty(c0.steps, R, dtype=dtype)
    evaluating = [0.0]  # seconds spent recording the losses
    t0 = time.perf_counter()

    def record(t):
        wa, va = active_weights(W, V)
        ws[t], vs[t] = wa, va
        if t in logged:
            t_ev = time.perf_counter()
            tr, te = (
                model.full_loss(E_ev, Y_ev, W, V),
                model.full_loss(E_te, Y_te, W, V),
            )
            for r, h in enumerate(hist):
                h.steps.append(t)
                h.train_loss.append(tr[r].item())
                h.test_loss.append(te[r].item())
                h.snapshots[t] = (W[r].cpu().clone(), V[r].cpu().clone())
            evaluating[0] += time.perf_counter() - t_ev

    draw = optimisers.minibatches(configs, batch_gens)
    record(0)
    with progress_bar(
        c0.steps, "SGD" if c0.optimizer == "sgd" else "Adam", progress
    ) as bar:
        for t in range(c0.steps):
            idx = draw(t).to(dev)
            loss, gW, gV = model.loss_and_grad(take_E(idx), take_Y(idx), W, V)
            if not torch.isfinite(loss).all():
                bad = [
                    c.seed
                    for c, ok in zip(configs, torch.isfinite(loss).tolist())
                    if not ok
                ]
                raise TrainingDiverged(
                    f"training diverged at step {t}: non-finite loss (runs "
                    f"with seed {bad}, "
                    f"eta = {[c.lr for c in configs]}); try a smaller "
                    "learning rate eta"
                )
            step(t + 1, gW, gV)
            batch_losses[t] = loss
            record(t + 1)
            bar.update()
    seconds = time.perf_counter() - t0
    per_step = [x.T.tolist() for x in (ws, vs, batch_losses)]
    for r, h in enumerate(hist):
        h.w, h.v, h.batch_loss = per_step[0][r], per_step[1][r], per_step[2][r]
        h.seconds, h.eval_seconds = seconds, evaluating[0]
    return hist


# --- progress bars for training


def show_progress() -> bool:
    """Progress bars by default in a terminal and in Jupyter or Colab, never
    when ``LNPOWER_PROGRESS=0`` (the book's build and tests set it)."""
    if os.environ.get("LNPOWER_PROGRESS", "1") == "0":
        return False
    return sys.stderr.isatty() or "ipykernel" in sys.modules


def progress_bar(total: int, desc: str, progress: bool | None = None):
    """A tqdm bar that appears only after 2 s (quick work shows nothing):
    the notebook widget in Jupyter and Colab (where ipywidgets is
    installed), text elsewhere."""
    if progress is None:
        progress = show_progress()
    bar = None
    if progress and "ipykernel" in sys.modules:
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm as bar
        except ImportError:
            pass
    if bar is None:
        from tqdm.std import tqdm as bar
    return bar(
        total=total, desc=desc, disable=not progress, leave=False, delay=2.0
    )
