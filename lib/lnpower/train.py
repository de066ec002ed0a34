"""Training by plain SGD, as in §5 (or Adam, beyond the paper): ``TrainConfig`` -> ``fit`` ->
``History``.

Several runs that share shapes (d, n, L, batch, T, target, LN) can be trained as one
batched computation with ``fit_many``; each run keeps its own data, seed and step size,
and gets the same numbers as when trained alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from . import engine
from .model import active_weights, structured
from .tasks import Task, embed, generator, principal_projector

MODELS = ("layer", "looped")
OPTIMIZERS = ("sgd", "adam")
ADAM = (0.9, 0.999, 1e-8)  # beta1, beta2, epsilon: torch.optim.Adam's defaults
TARGETS = ("subspace", "normalized", "unnormalized")
DTYPES = {"float32": torch.float32, "float64": torch.float64}


class TrainingDiverged(RuntimeError):
    """A non-finite loss appeared during training."""


def resolve_device(device: str) -> torch.device:
    """``torch.device(device)`` after checking it exists here; ``ValueError`` otherwise."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device {device!r} is not a valid torch device") from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} requested but no CUDA GPU is available")
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device {device!r}: use 'cpu' or 'cuda'")
    return dev


@dataclass
class TrainConfig:
    """Everything one training run needs (§5 defaults: d=16, n=32, eta=0.1, batch 128, T=2000).

    ``model``: ``"layer"`` (one layer, L=1) or ``"looped"`` (3.1) with ``loops`` L.
    ``target``: ``"subspace"`` (Dist^2 to V(X), the loss of Thm 4.1), ``"normalized"``
    (``Sa/||Sa||``, Eq. 4.4) or ``"unnormalized"`` (``Sa``). ``v0``: V21 = v0 I at t=0 (choice).
    ``optimizer``: ``"sgd"`` (the paper's) or ``"adam"`` (torch.optim.Adam's update and
    defaults, step size ``lr``).
    """

    task: str = "sphere"
    d: int = 16
    n: int = 32
    m: tuple[int, ...] | None = None
    model: str = "layer"
    loops: int = 1
    layer_norm: bool = True
    target: str = "normalized"
    lr: float = 0.1
    batch: int = 128
    steps: int = 2000
    train_size: int = 10_000
    test_size: int = 2_000
    seed: int = 0
    v0: float = 1.0
    init_scale: float = 0.0
    dtype: str = "float32"
    device: str = "cpu"
    log_points: int = 30
    snapshot_steps: tuple[int, ...] = ()
    optimizer: str = "sgd"

    def __post_init__(self):
        if self.m is not None:
            self.m = tuple(self.m)
        self.snapshot_steps = tuple(int(s) for s in self.snapshot_steps)
        t = self.make_task()
        self.d, self.n = t.d, t.n
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, got {self.target!r}")
        for name in ("loops", "batch", "steps", "train_size", "test_size", "log_points"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.model == "layer" and self.loops != 1:
            raise ValueError(f"model 'layer' has L = 1, got loops={self.loops}; use 'looped'")
        if not (isinstance(self.lr, (int, float)) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr (eta) must be a finite number > 0, got {self.lr!r}")
        if not math.isfinite(self.v0) or self.init_scale < 0:
            raise ValueError("v0 must be finite and init_scale >= 0")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if any(s < 0 or s > self.steps for s in self.snapshot_steps):
            raise ValueError(f"snapshot_steps must lie in [0, steps={self.steps}]")
        resolve_device(self.device)

    def make_task(self) -> Task:
        """The training distribution (Task 1 or Task 2)."""
        return Task(self.task, self.d, self.n, self.m)

    def schedule(self) -> list[int]:
        """Logged steps: 0, log-spaced points up to T, T, and the requested snapshots."""
        pts = np.unique(np.round(np.geomspace(1, self.steps, self.log_points)).astype(int))
        return sorted({0, self.steps, *pts.tolist(), *self.snapshot_steps})

    def shape_key(self) -> tuple:
        """What runs trained together must share."""
        return (self.d, self.n, self.model, self.loops, self.layer_norm,
                self.target, self.batch, self.steps, self.train_size, self.test_size,
                self.dtype, self.device, self.log_points, self.snapshot_steps, self.optimizer)


def paper_config(**overrides) -> TrainConfig:
    """The settings of §5 (d=16, n=32, 10 000/2 000 samples, SGD eta=0.1, batch 128,
    T=2000, W=0, V21=I) with ``overrides``; ``model="looped"`` defaults to L=10 and the
    subspace loss, ``model="layer"`` to the normalised target. Chapters and claims that ask for
    the same run get the same configuration, hence the same cached history."""
    overrides = {"snapshot_steps": (100, 300), **overrides}  # the snapshots of Fig. 5
    if overrides.get("model") == "looped":
        overrides = {"loops": 10, "target": "subspace", "log_points": 20, **overrides}
    return TrainConfig(**overrides)


@dataclass
class History:
    """What ``fit`` records. Per logged step: ``steps``, ``train_loss`` (full training set),
    ``test_loss``. Per SGD step t = 0..T: ``w``, ``v`` (active weights; alpha/beta for a layer)
    and ``batch_loss`` (t = 0..T-1). ``snapshots``: step -> (W, V)."""

    config: TrainConfig
    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    w: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    batch_loss: list[float] = field(default_factory=list)
    snapshots: dict[int, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def product(self) -> np.ndarray:
        """gamma_t = alpha_t beta_t (one layer) or rho_t = w_t v_t (looped), t = 0..T."""
        return np.asarray(self.w) * np.asarray(self.v)

    @property
    def W(self) -> torch.Tensor:
        """The final W."""
        return self.snapshots[self.config.steps][0]

    @property
    def V(self) -> torch.Tensor:
        """The final V."""
        return self.snapshots[self.config.steps][1]

    def summary(self) -> dict:
        """Final losses and active weights, named as in the paper for the model, and the
        configuration."""
        a, b, p = ("alpha", "beta", "gamma") if self.config.model == "layer" else ("w", "v", "rho")
        return {"final_train_loss": self.train_loss[-1], "final_test_loss": self.test_loss[-1],
                a: self.w[-1], b: self.v[-1], p: float(self.product[-1]),
                "seconds": self.seconds,
                "steps_per_second": self.config.steps / max(self.seconds, 1e-12),
                "config": dataclasses.asdict(self.config)}

    def save(self, path) -> Path:
        """Write to ``path`` (a directory is created; the file is ``history.pt``)."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        state = {k: getattr(self, k) for k in
                 ("steps", "train_loss", "test_loss", "w", "v", "batch_loss", "seconds")}
        state["snapshots"] = {str(k): [W, V] for k, (W, V) in self.snapshots.items()}
        state["config"] = json.dumps(dataclasses.asdict(self.config))
        torch.save(state, path / "history.pt")
        return path / "history.pt"

    @classmethod
    def load(cls, path) -> History:
        """Read what :meth:`save` wrote (a directory or the ``history.pt`` file)."""
        path = Path(path)
        if path.is_dir():
            path = path / "history.pt"
        state = torch.load(path, weights_only=True)
        config = TrainConfig(**json.loads(state.pop("config")))
        snaps = {int(k): (W, V) for k, (W, V) in state.pop("snapshots").items()}
        return cls(config=config, snapshots=snaps, **state)


def seeds(seed: int, streams: int = 3) -> list[int]:
    """Independent per-stream seeds (train data, test data, batches) from one seed."""
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(streams)]


def targets(X: torch.Tensor, a: torch.Tensor, target: str) -> torch.Tensor:
    """Per-sample targets: the projector onto V(X) ``(K, d, d)`` for ``"subspace"``,
    ``Sa/||Sa||`` or ``Sa`` ``(K, d)`` for the targets (4.4)."""
    if target == "subspace":
        return principal_projector(X)[0]
    Sa = (X @ (X.mT @ a.unsqueeze(-1)))[..., 0]
    return Sa / torch.linalg.vector_norm(Sa, dim=-1, keepdim=True) if target == "normalized" else Sa


def dataset(config: TrainConfig, which: str):
    """The embedded data ``E`` ``(K, 2d, n+1)`` and targets of the training or test set."""
    s_train, s_test, _ = seeds(config.seed)
    size, s = (config.train_size, s_train) if which == "train" else (config.test_size, s_test)
    X, a = config.make_task().sample(size, generator(s))
    dtype, dev = DTYPES[config.dtype], resolve_device(config.device)
    return embed(X, a).to(dev, dtype), targets(X, a, config.target).to(dev, dtype)


def initial_weights(config: TrainConfig):
    """Theorem 4.1's initialisation W = 0, V21 = v0 I, plus optional N(0, init_scale^2) noise
    in every entry (Part V's random initialisation; seeded by the run's seed)."""
    W, V = structured(config.d, 0.0, config.v0)
    if config.init_scale > 0:
        g = generator(seeds(config.seed, 4)[3])
        W = W + config.init_scale * torch.randn(W.shape, generator=g, dtype=W.dtype)
        V = V + config.init_scale * torch.randn(V.shape, generator=g, dtype=V.dtype)
    return W, V


def _progress(total: int, progress: bool | None):
    from tqdm.auto import tqdm

    if progress is None:
        progress = sys.stderr.isatty()
    return tqdm(total=total, disable=not progress, desc="SGD", leave=False)


def fit(config: TrainConfig, progress: bool | None = None, cache=None) -> History:
    """Train one run by plain SGD (W <- W - eta grad) and return its ``History``."""
    return fit_many([config], progress, cache)[0]


def cache_dir(cache) -> Path | None:
    """Where trained histories are kept: ``cache`` if a path, ``$LNPOWER_CACHE`` or
    ``~/.cache/lnpower`` if ``True``, nowhere if ``None``/``False``."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return Path(os.environ.get("LNPOWER_CACHE", Path.home() / ".cache" / "lnpower"))
    return Path(cache)


def _cache_key(configs: list[TrainConfig]) -> str:
    """Hash of the configurations, the library's training code and the torch version: a
    cached result is reused only if retraining would compute the same numbers."""
    h = hashlib.sha256(torch.__version__.encode())
    for mod in ("engine", "model", "tasks", "train"):
        h.update((Path(__file__).parent / f"{mod}.py").read_bytes())
    h.update(json.dumps([dataclasses.asdict(c) for c in configs], sort_keys=True).encode())
    return h.hexdigest()[:20]


def _sgd(W, V, lr):
    """The update ``theta -= eta * grad`` (in place)."""
    def step(t, gW, gV):
        W.sub_(lr * gW)
        V.sub_(lr * gV)
    return step


def _adam(W, V, lr):
    """torch.optim.Adam's update (in place), written out so that each run keeps its own lr."""
    b1, b2, eps = ADAM
    moments = [(torch.zeros_like(P), torch.zeros_like(P)) for P in (W, V)]

    def step(t, gW, gV):
        for P, g, (m, s) in zip((W, V), (gW, gV), moments):
            m.lerp_(g, 1 - b1)
            s.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (s.sqrt() / math.sqrt(1 - b2**t)).add_(eps)
            P.sub_(lr / (1 - b1**t) * m / denom)
    return step


def fit_many(configs: list[TrainConfig], progress: bool | None = None,
             cache=None) -> list[History]:
    """Train independent runs as one batched computation (same numbers as one by one).

    ``cache`` (a directory, or ``True`` for the default, see :func:`cache_dir`) keeps the
    histories so that another chapter asking for the same runs loads them instead."""
    if not configs:
        raise ValueError("fit_many needs at least one TrainConfig")
    where = cache_dir(cache)
    if where is not None:
        key = where / _cache_key(configs)
        if (key / "done").exists():
            return [History.load(key / str(r)) for r in range(len(configs))]
        hist = fit_many(configs, progress)
        for r, h in enumerate(hist):
            h.save(key / str(r))
        (key / "done").touch()
        return hist
    c0 = configs[0]
    if any(c.shape_key() != c0.shape_key() for c in configs):
        raise ValueError("runs trained together must share every setting but the task, seed, "
                         "lr, v0 and init_scale")
    dev, dtype = resolve_device(c0.device), DTYPES[c0.dtype]
    train = [dataset(c, "train") for c in configs]
    test = [dataset(c, "test") for c in configs]
    E_tr = torch.stack([e for e, _ in train])
    Y_tr = torch.stack([y for _, y in train])
    E_te = torch.stack([e for e, _ in test])
    Y_te = torch.stack([y for _, y in test])
    W, V = (torch.stack(t).to(dev, dtype) for t in zip(*map(initial_weights, configs)))
    lr = torch.tensor([c.lr for c in configs], dtype=dtype, device=dev)[:, None, None]
    batch_gens = [generator(seeds(c.seed)[2]) for c in configs]
    step = _adam(W, V, lr) if c0.optimizer == "adam" else _sgd(W, V, lr)
    model = engine.Model(c0.loops, c0.layer_norm, c0.target)
    take_E, take_Y = engine.Batcher(E_tr, c0.batch), engine.Batcher(Y_tr, c0.batch)
    hist = [History(config=c) for c in configs]
    logged = set(c0.schedule())
    ws, vs, batch_losses = [], [], []
    t0 = time.perf_counter()

    def record(t):
        wa, va = active_weights(W, V)
        ws.append(wa.clone())
        vs.append(va.clone())
        if t in logged:
            tr, te = model.full_loss(E_tr, Y_tr, W, V), model.full_loss(E_te, Y_te, W, V)
            for r, h in enumerate(hist):
                h.steps.append(t)
                h.train_loss.append(tr[r].item())
                h.test_loss.append(te[r].item())
                h.snapshots[t] = (W[r].cpu().clone(), V[r].cpu().clone())

    record(0)
    with _progress(c0.steps, progress) as bar:
        for t in range(c0.steps):
            idx = torch.stack([torch.randint(c0.train_size, (c0.batch,), generator=g)
                               for g in batch_gens]).to(dev)
            loss, gW, gV = model.loss_and_grad(take_E(idx), take_Y(idx), W, V)
            if not torch.isfinite(loss).all():
                bad = [c.seed for c, ok in zip(configs, torch.isfinite(loss).tolist()) if not ok]
                raise TrainingDiverged(
                    f"training diverged at step {t}: non-finite loss (runs with seed {bad}, "
                    f"eta = {[c.lr for c in configs]}); try a smaller learning rate eta")
            step(t + 1, gW, gV)
            batch_losses.append(loss)
            record(t + 1)
            bar.update()
    seconds = time.perf_counter() - t0
    per_step = [torch.stack(x).T.tolist() for x in (ws, vs, batch_losses)]
    for r, h in enumerate(hist):
        h.w, h.v, h.batch_loss = per_step[0][r], per_step[1][r], per_step[2][r]
        h.seconds = seconds
    return hist
