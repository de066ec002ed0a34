"""What a training run needs, with the paper's settings (§5) as defaults:
``TrainConfig`` and ``paper_config``; the one place the paper's experimental
settings are written down (``PAPER``, the two readings of its T, Fig. 3's
grid). Also which of the theorems' assumptions a configuration breaks
(:func:`departures`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from . import norms
from .devices import resolve_device
from .tasks import TARGETS, Task

MODELS = ("layer", "looped")
OPTIMIZERS = ("sgd", "adam")
# How minibatches are drawn: independently with replacement at every step (the
# book's default), or in epochs, passes without replacement over a fresh
# permutation of the training set (the last train_size % batch samples of each
# pass are dropped)
SAMPLINGS = ("replacement", "epochs")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
# Per model, what §5 trains: the looped model (3.1) with L = 10 on the distance
# to the principal subspace (Theorem 4.1); the single layer on the normalised
# power step (4.4)
MODEL_DEFAULTS = {
    "layer": {"loops": 1, "target": "normalized"},
    "looped": {"loops": 10, "target": "subspace"},
}
FIG5_SNAPSHOTS = (100, 300)  # the snapshots of Fig. 5 (besides T)
# Figs. 5 and G.3 loop a trained layer L = 1..25 times at inference
INFERENCE_LOOPS = 25


def _positive(name: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{name} must be a positive integer, got {v!r}")


@dataclass
class TrainConfig:
    """Everything one training run needs. The defaults are the paper's
    settings (§5): d = 16, n = 32, 10 000 training and 2 000 test samples,
    SGD with eta = 0.1 and batch 128 for T = 2000 steps from W = 0, V21 = v0
    I; where the paper states none, the book's choices (v0, below; float32;
    sampling with replacement), which the intro lists.

    ``model``: ``"layer"`` (one layer) or ``"looped"`` (3.1); ``loops`` (L)
    and ``target`` default to what the paper trains that model with
    (``MODEL_DEFAULTS``): L = 10 on the ``"subspace"`` loss (Dist^2 to V(X),
    Theorem 4.1) for the looped model, L = 1 on the ``"normalized"`` target
    Sa/||Sa|| (4.4) for the layer (or ``"unnormalized"``, Sa). ``norm``:
    the paper's LN (``"layernorm"``), ``"none"`` (the layer (4.3)) or any
    normalisation in ``lnpower.norms``. ``v0`` (V21 =
    v0 I at t = 0) is the book's choice; the paper gives none.
    ``optimizer``: ``"sgd"`` (the paper's) or ``"adam"`` (torch.optim.Adam's
    update). ``sampling``: minibatches drawn with replacement at every step
    (``"replacement"``) or in passes without replacement (``"epochs"``,
    ``SAMPLINGS``); ``steps`` counts iterations either way
    (:func:`epoch_steps` converts epochs). ``eval_size``: the training loss
    is recorded on a fixed random subset of this many training samples (an
    unbiased estimate of the full training loss), the test loss on the whole
    test set, at ``log_points`` log-spaced steps.
    """

    task: str = "sphere"
    d: int = 16
    n: int = 32
    m: tuple[int, ...] | None = None
    model: str = "layer"
    loops: int | None = None
    norm: str = "layernorm"
    target: str | None = None
    lr: float = 0.1
    batch: int = 128
    steps: int = 2000
    train_size: int = 10_000
    test_size: int = 2_000
    eval_size: int = 2_000
    seed: int = 0
    v0: float = 1.0
    init_scale: float = 0.0
    dtype: str = "float32"
    device: str = "cpu"
    log_points: int = 20
    snapshot_steps: tuple[int, ...] = ()
    optimizer: str = "sgd"
    sampling: str = "replacement"

    def __post_init__(self):
        if self.model not in MODELS:
            raise ValueError(
                f"model must be one of {MODELS}, got {self.model!r}"
            )
        for name, value in MODEL_DEFAULTS[self.model].items():
            if getattr(self, name) is None:
                setattr(self, name, value)
        if self.m is not None:
            self.m = tuple(self.m)
        self.snapshot_steps = tuple(int(s) for s in self.snapshot_steps)
        t = self.make_task()
        self.d, self.n = t.d, t.n
        norms.get(self.norm)  # ValueError naming the registered ones
        if self.target not in TARGETS:
            raise ValueError(
                f"target must be one of {TARGETS}, got {self.target!r}"
            )
        for name in (
            "loops",
            "batch",
            "steps",
            "train_size",
            "test_size",
            "eval_size",
            "log_points",
        ):
            _positive(name, getattr(self, name))
        if self.model == "layer" and self.loops != 1:
            raise ValueError(
                f"model 'layer' has L = 1, got loops={self.loops}; use "
                "'looped'"
            )
        if not (
            isinstance(self.lr, (int, float))
            and math.isfinite(self.lr)
            and self.lr > 0
        ):
            raise ValueError(
                f"lr (eta) must be a finite number > 0, got {self.lr!r}"
            )
        if not math.isfinite(self.v0) or not self.init_scale >= 0:
            raise ValueError("v0 must be finite and init_scale >= 0")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(
                f"optimizer must be one of {OPTIMIZERS}, got "
                f"{self.optimizer!r}"
            )
        if self.sampling not in SAMPLINGS:
            raise ValueError(
                f"sampling must be one of {SAMPLINGS}, got {self.sampling!r}"
            )
        if self.sampling == "epochs" and self.batch > self.train_size:
            raise ValueError(
                f"sampling 'epochs' needs batch <= train_size, got batch "
                f"{self.batch} > train_size {self.train_size}"
            )
        if self.dtype not in DTYPES:
            raise ValueError(
                f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}"
            )
        if any(s < 0 or s > self.steps for s in self.snapshot_steps):
            raise ValueError(
                f"snapshot_steps must lie in [0, steps={self.steps}]"
            )
        resolve_device(self.device)

    def make_task(self) -> Task:
        """The training distribution (Task 1 or Task 2)."""
        return Task(self.task, self.d, self.n, self.m)

    def schedule(self) -> list[int]:
        """Logged steps: 0, log-spaced points up to T, T, and the requested
        snapshots."""
        pts = np.unique(
            np.round(np.geomspace(1, self.steps, self.log_points)).astype(int)
        )
        return sorted({0, self.steps, *pts.tolist(), *self.snapshot_steps})

    def shape_key(self) -> tuple:
        """What runs trained together must share."""
        return (
            self.d,
            self.n,
            self.model,
            self.loops,
            self.norm,
            self.target,
            self.batch,
            self.steps,
            self.train_size,
            self.test_size,
            self.eval_size,
            self.dtype,
            self.device,
            self.log_points,
            self.snapshot_steps,
            self.optimizer,
            self.sampling,
        )

    def epoch_steps(self, epochs: int) -> int:
        """SGD iterations in ``epochs`` passes over the training set (whole
        batches)."""
        return epochs * (self.train_size // self.batch)

    def departures(self) -> list[str]:
        """The assumptions of the paper's theorems that these settings
        break, one line each (``lnpower.config``)."""
        return departures(self)

    def memory_bytes(self, runs: int = 1) -> int:
        """Memory the run needs, roughly: data sets, targets, the engine's
        buffers and the per-step records (w, v and the minibatch loss: a
        buffer entry and a Python float each, 32 bytes)."""
        D, N, item = (
            2 * self.d,
            self.n + 1,
            torch.finfo(DTYPES[self.dtype]).bits // 8,
        )
        per_target = self.d * self.d if self.target == "subspace" else self.d
        samples = self.train_size + self.test_size + self.eval_size
        data = samples * (D * N + per_target)
        engine = (
            self.batch * (self.loops * (3 * N * D + D * D + N) + 4 * N * D)
            + 4096
        )
        per_step = 3 * (self.steps + 1) * (item + 32)
        return int(runs * ((data + 2 * engine) * item + per_step))


def paper_config(**overrides) -> TrainConfig:
    """The settings of §5 for the chosen ``model`` (see
    :class:`TrainConfig`), with the snapshots of Fig. 5 kept, and
    ``overrides``. Chapters and claims that ask for the same run get the
    same configuration, hence the same cached history."""
    return TrainConfig(**{"snapshot_steps": FIG5_SNAPSHOTS, **overrides})


# read the paper's settings from here (PAPER.lr, PAPER.d, ...)
PAPER = paper_config()
# The two readings of the paper's "an epoch number of 2000": T = 2000 SGD
# iterations (the book's default), or 2000 passes without replacement over the
# 10 000 training samples (156 000 iterations)
T_READINGS = {
    "iterations": PAPER.steps,
    "epochs": PAPER.epoch_steps(PAPER.steps),
}
# Fig. 3's grid of (d, n) (Appendix G.1); Task 2 exists only where n > d
FIG3_GRID = tuple((d, n) for d in (8, 16) for n in (16, 32, 64))


def paper_task(name: str = "sphere") -> Task:
    """Task 1 (``"sphere"``) or Task 2 (``"rotated"``) at the paper's d and
    n."""
    return Task(name, PAPER.d, PAPER.n)


def departures(c) -> list[str]:
    """The assumptions of the paper's theorems that these settings
    break, one line each (the run is still valid; the theorems just do
    not describe it)."""
    out = []
    if c.task == "sphere" and c.n <= c.d + 1:
        out.append(
            f"Assumption 3.2 (A3): with n = {c.n} <= d + 1 = "
            f"{c.d + 1}, "
            "E[1/lambda_d(X)] is infinite for Task 1"
        )
    if c.batch > c.train_size:
        out.append(
            f"a minibatch of {c.batch} from a training set of "
            f"{c.train_size}: every step sees samples more than once"
        )
    if c.init_scale > 0 or c.v0 <= 0:
        out.append(
            "the initialisation of Theorems 4.1-4.3 (W = 0, V21 = v0 I "
            "with v0 > 0)"
        )
    if c.optimizer != "sgd":
        out.append(
            "gradient descent (§4): the theorems describe (S)GD, not "
            f"{c.optimizer}"
        )
    if c.model == "looped" and c.target != "subspace":
        out.append(
            "Theorem 4.1 trains the looped model on Dist^2 to V(X) "
            "(target "
            f"'subspace'), not {c.target!r}"
        )
    if c.model == "layer" and c.target == "subspace":
        out.append(
            "Theorems 4.2 and 4.3 train the layer on a power-step target (4.4)"
        )
    if c.norm not in ("layernorm", "none"):
        out.append(
            f"the paper's LN (§3.2): norm {c.norm!r} is another normalisation"
        )
    if c.model == "looped" and c.norm != "layernorm":
        out.append("Theorem 4.1 is about the looped model with LN")
    if c.target == "unnormalized" and c.norm != "none":
        out.append("Theorem 4.3 trains the LN layer on the normalised target")
    return out
