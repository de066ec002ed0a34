"""The naive reference (plain PyTorch autograd and ``torch.optim.SGD``) and
the benchmark that compares it with the engine (``python -m lnpower
bench``)."""

from __future__ import annotations

import time

import torch

from .. import engine
from ..config import resolve_device
from ..model import layer_norm, looped, output, structured
from ..tasks import Task, embed, generator, per_sample_loss, targets


def naive_loss(E, Y, W, V, loops: int, ln: bool, target: str):
    """The model's own forward pass, every loop in full as the equations read
    (``lnpower.model.looped``), and the loss, averaged over the batch.
    E ``(B, 2d, n+1)``, W, V ``(2d, 2d)``."""
    y = output(looped(E, W, V, loops, layer_norm if ln else None))
    return per_sample_loss(y, Y, target).mean()


def naive_grad(E, Y, W, V, loops: int, ln: bool, target: str):
    """Loss and autograd gradients of :func:`naive_loss`."""
    W = W.detach().requires_grad_(True)
    V = V.detach().requires_grad_(True)
    loss = naive_loss(E, Y, W, V, loops, ln, target)
    gW, gV = torch.autograd.grad(loss, (W, V))
    return loss.detach(), gW, gV


def engine_flops(L: int, B: int, d: int, n: int) -> float:
    """Floating-point operations of one engine step (forward and backward),
    counting each multiply-add as 2: full loops cost 8 N D^2 forward and 14
    N D^2 backward (8 for the first, whose input needs no gradient); the
    last loop's column costs O(D^2 + D N)."""
    D, N = 2 * d, n + 1
    full = (
        0
        if L == 1
        else (L - 1) * 8 * N * D**2 + (L - 2) * 14 * N * D**2 + 8 * N * D**2
    )
    column = 4 * D**2 + 4 * D * N + 6 * D**2 + 8 * D * N
    return float(B * (full + column))


def _best_rate(step, steps: int, repeats: int) -> float:
    """Steps per second: the best of ``repeats`` timed blocks of ``steps``
    steps."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, time.perf_counter() - t0)
    return steps / best


def peak_gflops(size: int = 1024, repeats: int = 10, device="cpu") -> float:
    """The machine's float32 matmul rate (GFLOP/s) on ``size x size``
    matrices, best of ``repeats``."""
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(size, size, generator=g, device=device)
    b = torch.randn(size, size, generator=g, device=device)
    for _ in range(2):
        a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        (a @ b).sum().item()
        best = min(best, time.perf_counter() - t0)
    return 2 * size**3 / best / 1e9


def compare(
    loops: int = 10,
    batch: int = 128,
    d: int = 16,
    n: int = 32,
    steps: int = 20,
    repeats: int = 7,
    device: str = "cpu",
    lr: float = 0.1,
) -> dict:
    """Steps/s of the engine and of the naive reference on identical data
    and initial weights (the paper's settings by default, float32). Blocks
    of the two are interleaved so that both see the same machine state; each
    rate is the best block."""
    dev = resolve_device(device)
    target = "subspace" if loops > 1 else "normalized"
    X, a = Task("sphere", d, n).sample(batch, generator(0))
    E = embed(X, a).to(dev, torch.float32)
    Y = targets(X, a, target).to(dev, torch.float32)
    W0, V0 = structured(d, 0.0, 1.0)
    noise = (
        torch.randn(
            (2, 2 * d, 2 * d), generator=generator(1), dtype=torch.float64
        )
        * 0.05
    )
    W0, V0 = (
        (W0 + noise[0]).to(dev, torch.float32),
        (V0 + noise[1]).to(dev, torch.float32),
    )

    Wn, Vn = W0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
    opt = torch.optim.SGD([Wn, Vn], lr=lr)

    def naive_step():
        opt.zero_grad()
        naive_loss(E, Y, Wn, Vn, loops, True, target).backward()
        opt.step()

    model = engine.Model(loops, True, target)
    We, Ve = W0[None].clone(), V0[None].clone()

    def engine_step():
        _, gW, gV = model.loss_and_grad(E[None], Y[None], We, Ve)
        We.sub_(lr * gW)
        Ve.sub_(lr * gV)

    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    for f in (naive_step, engine_step):  # warm-up
        for _ in range(3):
            f()
    rates = {"naive": 0.0, "engine": 0.0}
    for _ in range(repeats):
        for name, f in (("naive", naive_step), ("engine", engine_step)):
            rates[name] = max(
                rates[name], _best_rate(lambda f=f: (f(), sync()), steps, 1)
            )
    peak = peak_gflops(device=dev)
    gflops = engine_flops(loops, batch, d, n) * rates["engine"] / 1e9
    return {
        "model": "looped" if loops > 1 else "layer",
        "loops": loops,
        "batch": batch,
        "d": d,
        "n": n,
        "device": str(dev),
        "engine_steps_per_s": rates["engine"],
        "naive_steps_per_s": rates["naive"],
        "speedup": rates["engine"] / rates["naive"],
        "gflops": gflops,
        "peak_gflops": peak,
        "efficiency": gflops / peak,
    }


PLAIN_LOOP = """
import sys
import torch
from lnpower.model import looped, output, structured
from lnpower.tasks import Task, embed, generator, per_sample_loss, targets

steps, loops = int(sys.argv[1]), 10
g = generator(0)
task = Task("sphere", 16, 32)
X, a = task.sample(10_000, g)
E, Y = embed(X, a).float(), targets(X, a, "subspace").float()
Xt, at = task.sample(2_000, g)
Et, Yt = embed(Xt, at).float(), targets(Xt, at, "subspace").float()
W, V = (t.float().requires_grad_(True) for t in structured(16, 0.0, 1.0))
opt = torch.optim.SGD([W, V], lr=0.1)
for t in range(steps):
    idx = torch.randint(10_000, (128,), generator=g)
    opt.zero_grad()
    y = output(looped(E[idx], W, V, loops))
    per_sample_loss(y, Y[idx], "subspace").mean().backward()
    opt.step()
with torch.no_grad():
    print(per_sample_loss(output(looped(Et, W, V, loops)), Yt,
                          "subspace").mean().item())
"""


def end_to_end(steps: int = 301, repeats: int = 2) -> dict:
    """Wall-clock seconds of ``python -m lnpower train`` at the paper's
    looped settings (L = 10, d = 16, n = 32, batch 128, its evaluation
    schedule included) against the plain loop a user would write (autograd
    through the model, ``torch.optim.SGD``, one test-set evaluation at the
    end), each a fresh process, start-up included; best of ``repeats``,
    interleaved."""
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "plain.py"
        script.write_text(PLAIN_LOOP)
        commands = {
            "lnpower train": [
                sys.executable,
                "-m",
                "lnpower",
                "train",
                "--model",
                "looped",
                "--steps",
                str(steps),
                "--json",
            ],
            "plain loop": [sys.executable, str(script), str(steps)],
        }
        best = {k: float("inf") for k in commands}
        for _ in range(repeats):
            for name, cmd in commands.items():
                t0 = time.perf_counter()
                subprocess.run(
                    cmd,
                    check=True,
                    capture_output=True,
                    cwd=tmp,
                    env={**os.environ, "LNPOWER_PROGRESS": "0"},
                )
                best[name] = min(best[name], time.perf_counter() - t0)
    return {
        "steps": steps,
        "seconds": best,
        "steps_per_s": {k: steps / v for k, v in best.items()},
        "speedup": best["plain loop"] / best["lnpower train"],
    }
