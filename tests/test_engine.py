"""The engine against the model's own forward pass and autograd
(lnbook.bench), for every normalisation in lnpower.norms."""

import pytest
import torch
from lnbook import bench

from lnpower import engine, norms
from lnpower.tasks import Task, embed, generator, targets


def naive_grad(E, Y, W, V, loops: int, norm: str, target: str):
    """Loss and autograd gradients of the model's own forward pass."""
    W = W.detach().requires_grad_(True)
    V = V.detach().requires_grad_(True)
    loss = bench.naive_loss(E, Y, W, V, loops, norm, target)
    gW, gV = torch.autograd.grad(loss, (W, V))
    return loss.detach(), gW, gV


@pytest.mark.parametrize(
    "loops,norm,target",
    [
        (1, "layernorm", "normalized"),
        (1, "none", "unnormalized"),
        (4, "layernorm", "subspace"),
        (3, "none", "normalized"),
        *((L, name, "subspace") for name in norms.NORMS for L in (1, 3)),
    ],
)
def test_gradients_equal_autograd(loops, norm, target):
    X, a = Task("sphere", 5, 9).sample(32, generator(0))
    E, Y = embed(X, a), targets(X, a, target)
    g = generator(1)
    W, V = (
        0.3 * torch.randn(10, 10, generator=g, dtype=torch.float64)
        for _ in range(2)
    )
    l1, gW1, gV1 = naive_grad(E, Y, W, V, loops, norm, target)
    l2, gW2, gV2 = engine.Model(loops, norm, target).loss_and_grad(
        E[None], Y[None], W[None], V[None]
    )
    torch.testing.assert_close(l2[0], l1, rtol=1e-12, atol=0)
    torch.testing.assert_close(gW2[0], gW1, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(gV2[0], gV1, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "dtype,rtol", [(torch.float64, 1e-10), (torch.float32, 1e-4)]
)
def test_training_trajectories_agree(dtype, rtol):
    """100 SGD steps of the looped model (L = 4) with the engine and with
    autograd + torch.optim.SGD on the same batches give the same losses."""
    X, a = Task("sphere", 8, 16).sample(512, generator(2))
    E, Y = embed(X, a).to(dtype), targets(X, a, "subspace").to(dtype)
    g = generator(3)
    # the paper's initialisation (W = 0, V21 = I) plus small noise in every
    # block; from a large random initialisation the trajectory is chaotic and
    # rounding alone separates the two
    W0 = 0.01 * torch.randn(16, 16, generator=g, dtype=torch.float64).to(dtype)
    V0 = 0.01 * torch.randn(16, 16, generator=g, dtype=torch.float64).to(dtype)
    V0[8:, :8] += torch.eye(8, dtype=dtype)
    Wn, Vn = W0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
    opt = torch.optim.SGD([Wn, Vn], lr=0.1)
    We, Ve = W0[None].clone(), V0[None].clone()
    model = engine.Model(4, "layernorm", "subspace")
    bg = generator(4)
    for _ in range(100):
        idx = torch.randint(512, (64,), generator=bg)
        opt.zero_grad()
        ln = bench.naive_loss(
            E[idx], Y[idx], Wn, Vn, 4, "layernorm", "subspace"
        )
        ln.backward()
        opt.step()
        le, gW, gV = model.loss_and_grad(E[idx][None], Y[idx][None], We, Ve)
        We -= 0.1 * gW
        Ve -= 0.1 * gV
        assert abs(le[0].item() / ln.item() - 1) < rtol
    torch.testing.assert_close(We[0], Wn.detach(), rtol=rtol * 10, atol=rtol)


def test_flop_count_matches_layer_shapes():
    assert (
        bench.engine_flops(1, 1, 16, 32)
        < bench.engine_flops(2, 1, 16, 32) / 10
    )
    assert bench.engine_flops(10, 2, 16, 32) == 2 * bench.engine_flops(
        10, 1, 16, 32
    )


def _bench(per_run: dict, steady: dict) -> dict:
    """A :func:`bench.compare` result: seconds of a paper-length run and
    steady-state ratios for each engine."""
    return {
        "engines": {
            name: {"paper_run_s": s, "vs_engine": steady.get(name, 1.0)}
            for name, s in per_run.items()
        }
    }


def test_the_engine_rule_counts_compilation():
    """The rule of ``lnpower.engine``: an autograd engine is selected only
    if it is within 15 % of the hand-written one on every model, over a
    paper-length run with its compilation."""
    fast_steady = {"torch.compile": 1.1, "torch.func": 0.5}
    slow_start = {"engine": 27.0, "torch.compile": 44.0, "torch.func": 52.0}
    looped, layer = (
        _bench(slow_start, fast_steady),
        _bench(
            {"engine": 1.0, "torch.compile": 1.1, "torch.func": 2.5},
            fast_steady,
        ),
    )
    rule = bench.select([looped, layer])
    assert rule["selected"] == "engine"
    assert rule["ratios"]["torch.compile"]["steady"] == 1.1
    assert abs(rule["ratios"]["torch.compile"]["per_run"] - 27 / 44) < 1e-12
    looped["engines"]["torch.compile"]["paper_run_s"] = 30.0
    assert bench.select([looped, layer])["selected"] == "torch.compile"
    assert bench.select([looped])["selected"] == "torch.compile"
    layer["engines"]["torch.compile"]["paper_run_s"] = 1.2
    assert bench.select([looped, layer])["selected"] == "engine"
