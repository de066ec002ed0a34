"""The benchmark end to end: ``python -m lnpower train`` against a plain
autograd training loop, each in fresh processes, start-up included
(``python -m lnpower bench --end-to-end STEPS``)."""

from __future__ import annotations

import time

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
