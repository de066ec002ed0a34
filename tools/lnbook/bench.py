"""The benchmark (``python -m lnbook bench``): the hand-written engine
against engines whose gradients come from autograd, on the same data and
weights. The autograd engines: the naive reference (the model's forward pass
in full, ``torch.optim.SGD``), ``torch.func`` (``vmap`` of ``grad`` over
runs, through ``model.predict``, which computes the last loop's last column
only) and ``torch.compile`` of the same forward and backward."""

from __future__ import annotations

import time

import torch
from torch.func import grad_and_value, vmap

from lnpower import engine
from lnpower.config import PAPER
from lnpower.devices import resolve_device
from lnpower.model import looped, output, predict, structured
from lnpower.tasks import Task, embed, generator, per_sample_loss, targets


def naive_loss(E, Y, W, V, loops: int, norm: str, target: str):
    """The model's own forward pass, every loop in full as the equations read
    (``lnpower.model.looped``), and the loss, averaged over the batch.
    E ``(B, 2d, n+1)``, W, V ``(2d, 2d)``."""
    y = output(looped(E, W, V, loops, norm))
    return per_sample_loss(y, Y, target).mean()


def autograd_step(loops: int, norm: str, target: str):
    """Loss and gradients per run by autograd through ``model.predict``,
    vectorised over runs with ``torch.func``: ``(W, V, E, Y)`` batched like
    the engine's arguments -> ``((gW, gV), loss)``."""

    def loss(W, V, E, Y):
        y = predict(E, W, V, loops, norm)
        return per_sample_loss(y, Y, target).mean()

    return vmap(grad_and_value(loss, argnums=(0, 1)))


def compiled_step(loops: int, norm: str, target: str):
    """The same loss and gradients, ``torch.compile``-d (forward and
    backward as one graph; compiled at its first call per shape)."""

    def step(W, V, E, Y):
        W, V = W.detach().requires_grad_(), V.detach().requires_grad_()
        y = predict(E, W[:, None], V[:, None], loops, norm)
        loss = per_sample_loss(y, Y, target).mean(-1)
        return torch.autograd.grad(loss.sum(), (W, V)), loss.detach()

    return torch.compile(step)


def engine_flops(L: int, B: int, d: int, n: int) -> float:
    """Floating-point operations of one engine step (forward and backward),
    counting each multiply-add as 2: with a = 2d rows and b = n + 1
    columns, full loops cost 8 b a^2 forward and 14 b a^2 backward (8 for
    the first, whose input needs no gradient); the last loop's column costs
    O(a^2 + a b)."""
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
    autograd: bool = True,
) -> dict:
    """Steps/s of the engine and of the autograd engines (the naive
    reference; with ``autograd``, also ``torch.func`` and ``torch.compile``)
    on identical data and initial weights (the paper's settings by default,
    float32). Blocks of each are interleaved so that all see the same
    machine state; each rate is the best block. ``efficiency``: the engine's
    useful floating-point rate (:func:`engine_flops`) over the machine's
    matmul peak; ``first_step_s``: the first step, compilation included."""
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

    steps_of = _engines(E, Y, W0, V0, loops, target, lr, autograd)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    first = {}
    for name, f in steps_of.items():  # warm-up (compiles), timed once
        t0 = time.perf_counter()
        f()
        sync()
        first[name] = time.perf_counter() - t0
        for _ in range(2):
            f()
    rates = dict.fromkeys(steps_of, 0.0)
    for _ in range(repeats):
        for name, f in steps_of.items():
            rates[name] = max(
                rates[name], _best_rate(lambda f=f: (f(), sync()), steps, 1)
            )
    peak = peak_gflops(device=dev)
    flops = engine_flops(loops, batch, d, n)
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
        "gflops": flops * rates["engine"] / 1e9,
        "peak_gflops": peak,
        "efficiency": flops * rates["engine"] / 1e9 / peak,
        "engines": {
            name: {
                "steps_per_s": rate,
                "vs_engine": rate / rates["engine"],
                "efficiency": flops * rate / 1e9 / peak,
                "first_step_s": first[name],
                # a run of the paper's T = 2000 steps, compilation included
                "paper_run_s": first[name] + (PAPER.steps - 1) / rate,
            }
            for name, rate in rates.items()
        },
    }


def select(results: list[dict], within: float = 0.15) -> dict:
    """The engine rule of the training engine (``lnpower.engine``): an
    autograd engine replaces the hand-written one if, on every model of
    ``results`` (:func:`compare`'s dicts, with ``autograd``), its steps/s
    are within ``within`` of the hand-written engine's. Steps/s are
    counted over a run of the paper's T steps in a fresh process,
    compilation included (``paper_run_s``), since every run of a new shape
    pays it; the steady-state ratio (``vs_engine``) is reported beside.
    Of those that pass, the fastest is selected."""
    ratios = {}
    for name in results[0]["engines"]:
        if name in ("engine", "naive"):
            continue
        per_run = [
            r["engines"]["engine"]["paper_run_s"]
            / r["engines"][name]["paper_run_s"]
            for r in results
        ]
        steady = [r["engines"][name]["vs_engine"] for r in results]
        ratios[name] = {"per_run": min(per_run), "steady": min(steady)}
    passing = [k for k, v in ratios.items() if v["per_run"] >= 1 - within]
    best = max(passing, key=lambda k: ratios[k]["per_run"], default="engine")
    return {"selected": best, "within": within, "ratios": ratios}


def _engines(E, Y, W0, V0, loops, target, lr, autograd: bool) -> dict:
    """One SGD step of each engine on ``(E, Y)`` from ``(W0, V0)``, as
    functions of nothing: ``naive``, ``engine`` and, with ``autograd``,
    ``torch.func`` and ``torch.compile``."""
    Wn, Vn = W0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
    opt = torch.optim.SGD([Wn, Vn], lr=lr)

    def naive():
        opt.zero_grad()
        naive_loss(E, Y, Wn, Vn, loops, "layernorm", target).backward()
        opt.step()

    model = engine.Model(loops, "layernorm", target)
    out = {"naive": naive}
    updates = {
        "engine": lambda W, V: model.loss_and_grad(E[None], Y[None], W, V)[1:]
    }
    if autograd:
        func = autograd_step(loops, "layernorm", target)
        comp = compiled_step(loops, "layernorm", target)
        updates["torch.func"] = lambda W, V: func(W, V, E[None], Y[None])[0]
        updates["torch.compile"] = lambda W, V: comp(W, V, E[None], Y[None])[0]
    for name, grads in updates.items():
        W, V = W0[None].clone(), V0[None].clone()

        def step(W=W, V=V, grads=grads):
            gW, gV = grads(W, V)
            W.sub_(lr * gW)
            V.sub_(lr * gV)

        out[name] = step
    return out


# --- end to end: `python -m lnpower train` against a plain autograd loop,
# each in fresh processes, start-up included (--end-to-end STEPS)


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
