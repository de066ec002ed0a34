"""How a training step moves the weights and picks its minibatch: the
optimizers' updates, in place and per run, and the minibatch draws
(``TrainConfig.optimizer`` and ``TrainConfig.sampling``)."""

from __future__ import annotations

import math

import torch

# beta1, beta2, epsilon: torch.optim.Adam's defaults
ADAM = (0.9, 0.999, 1e-8)


def sgd(W, V, lr):
    """The update ``theta -= eta * grad`` (in place)."""

    def step(t, gW, gV):
        W.sub_(lr * gW)
        V.sub_(lr * gV)

    return step


def adam(W, V, lr):
    """torch.optim.Adam's update (in place), written out so that each run
    keeps its own lr."""
    b1, b2, eps = ADAM
    moments = [(torch.zeros_like(P), torch.zeros_like(P)) for P in (W, V)]

    def step(t, gW, gV):
        for P, g, (m, s) in zip((W, V), (gW, gV), moments):
            m.lerp_(g, 1 - b1)
            s.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (s.sqrt() / math.sqrt(1 - b2**t)).add_(eps)
            P.sub_(lr / (1 - b1**t) * m / denom)

    return step


def epochs(configs, gens):
    """Minibatch indices for passes without replacement: step t takes the (t
    mod P)-th batch of its epoch's permutation, P = train_size // batch, a
    new permutation per epoch."""
    c0 = configs[0]
    per = c0.train_size // c0.batch
    perm = [None]

    def draw(t):
        if t % per == 0:
            perm[0] = torch.stack(
                [torch.randperm(c0.train_size, generator=g) for g in gens]
            )
        i = (t % per) * c0.batch
        return perm[0][:, i : i + c0.batch]

    return draw


def minibatches(configs, gens):
    """The minibatch indices ``(R, batch)`` of step t, as a function of t:
    with replacement at every step, or in epochs (:func:`epochs`)."""
    c0 = configs[0]
    if c0.sampling == "epochs":
        return epochs(configs, gens)
    return lambda t: torch.stack(
        [torch.randint(c0.train_size, (c0.batch,), generator=g) for g in gens]
    )


class Batcher:
    """Minibatches ``data[r, idx[r]]`` for every run r (data ``(R, K,
    ...)``, idx ``(R, B)``), written into one buffer reused at every call (a
    fresh batch each step costs page faults; this made a layer's training
    about 25 % faster): a result is valid until the next call."""

    def __init__(self, data: torch.Tensor, batch: int):
        R, K = data.shape[:2]
        self.flat = data.reshape(R * K, *data.shape[2:])
        self.offset = torch.arange(R, device=data.device)[:, None] * K
        self.out = torch.empty(
            (R * batch, *data.shape[2:]), dtype=data.dtype, device=data.device
        )

    def __call__(self, idx: torch.Tensor) -> torch.Tensor:
        torch.index_select(
            self.flat, 0, (idx + self.offset).flatten(), out=self.out
        )
        return self.out.view(*idx.shape, *self.flat.shape[1:])
