"""What a training run records (``History``), and its file format."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .cache import atomic_write
from .config import TrainConfig


@dataclass
class History:
    """What ``train.fit`` records. Per logged step (``config.schedule()``):
    ``steps``, ``train_loss`` (on the fixed evaluation subset of the
    training set, see :class:`~lnpower.config.TrainConfig`), ``test_loss``
    (the whole test set) and ``snapshots`` (step -> (W, V)). Per SGD step t
    = 0..T: ``w``, ``v`` (the active weights, alpha/beta for a layer) and
    ``batch_loss`` (the minibatch loss, t = 0..T-1)."""

    config: TrainConfig
    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    test_loss: list[float] = field(default_factory=list)
    w: list[float] = field(default_factory=list)
    v: list[float] = field(default_factory=list)
    batch_loss: list[float] = field(default_factory=list)
    snapshots: dict[int, tuple[torch.Tensor, torch.Tensor]] = field(
        default_factory=dict
    )
    seconds: float = 0.0  # the whole training loop
    eval_seconds: float = (
        0.0  # of which recording the losses on the log schedule
    )

    @property
    def product(self) -> np.ndarray:
        """gamma_t = alpha_t beta_t (one layer) or rho_t = w_t v_t (looped),
        t = 0..T."""
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
        """Final losses and active weights, named as in the paper for the
        model, and the configuration."""
        a, b, p = (
            ("alpha", "beta", "gamma")
            if self.config.model == "layer"
            else ("w", "v", "rho")
        )
        return {
            "final_train_loss": self.train_loss[-1],
            "final_test_loss": self.test_loss[-1],
            a: self.w[-1],
            b: self.v[-1],
            p: float(self.product[-1]),
            "seconds": self.seconds,
            "steps_per_second": self.config.steps / max(self.seconds, 1e-12),
            "evaluation_seconds": self.eval_seconds,
            "config": dataclasses.asdict(self.config),
        }

    def save(self, path) -> Path:
        """Write to ``path`` (a folder, created if missing; the file is
        ``history.pt``), atomically."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        state = {
            k: getattr(self, k)
            for k in (
                "steps",
                "train_loss",
                "test_loss",
                "w",
                "v",
                "batch_loss",
                "seconds",
                "eval_seconds",
            )
        }
        state["snapshots"] = {
            str(k): [W, V] for k, (W, V) in self.snapshots.items()
        }
        state["config"] = json.dumps(dataclasses.asdict(self.config))
        return atomic_write(
            path / "history.pt", lambda tmp: torch.save(state, tmp)
        )

    @classmethod
    def load(cls, path) -> History:
        """Read what :meth:`save` wrote (the folder or its ``history.pt``
        file)."""
        path = Path(path)
        if path.is_dir():
            path = path / "history.pt"
        state = torch.load(path, weights_only=True)
        config = TrainConfig(**json.loads(state.pop("config")))
        snaps = {
            int(k): (W, V) for k, (W, V) in state.pop("snapshots").items()
        }
        return cls(config=config, snapshots=snaps, **state)
