"""The chapter where (Part V): where the theorems hold. The grid of runs,
the theory's predictions at each of its points, their agreement with SGD,
and the chapter's claims (``python -m lnpower sweep where`` trains the full
grid, ``sweep where-subset`` the part the chapter trains).

The grid: Task 1 at d in ``DS`` and n = k d for k in ``RATIOS`` (from below
(A3)'s n > d + 1 to 8d), at the step sizes ``LRS``, ``SEEDS`` per point, for
three set-ups (``SETUPS``): the layer without LN (Theorem 4.2), the LN layer
(Theorem 4.3), both on the normalised target (4.4), and the looped model
with LN at L = ``LOOPS`` (Theorem 4.1). The settings are smaller than §5's
(``COMMON``) so that the full grid trains in minutes on two cores.

Predictions, from a float64 Monte Carlo sample at each (d, n): gamma* and
L* (Theorem 4.2's closed forms), gamma_T or rho_T of the exact population
recursion at the same eta and T (``lnpower.dynamics``), the looped model's
population loss L_L(rho_T) and its limit L_L^(inf), the power method's
error."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .. import cache as _cache
from .. import dynamics, inference, sweep, theory
from ..cache import memo
from ..claims.status import over_seeds, verdict
from ..config import TrainConfig
from ..tasks import Task, generator, principal_projector
from ..train import run_key

DS = (4, 8, 16, 32)
RATIOS = (0.5, 1, 2, 4, 8)  # n / d
LRS = (0.05, 0.1)
SEEDS = (0, 1, 2)
LOOPS = 4
COMMON = dict(
    task="sphere",
    train_size=2000,
    test_size=500,
    eval_size=500,
    log_points=8,
)
SETUPS = {
    "no LN": dict(
        model="layer", norm="none", target="normalized", steps=1000, batch=64
    ),
    "LN layer": dict(
        model="layer",
        norm="layernorm",
        target="normalized",
        steps=1000,
        batch=64,
    ),
    "looped": dict(
        model="looped", loops=LOOPS, target="subspace", steps=500, batch=16
    ),
}
SUBSET = dict(ds=(4, 8), lrs=(0.1,))  # what the chapter trains cold
SAMPLES = 5000  # Monte Carlo draws per (d, n)
INFERENCE = dict(points=200, loops=8)  # the per-loop rate's test points


def points(ds=DS) -> list[tuple[int, int]]:
    """The grid's (d, n)."""
    return [(d, max(2, int(r * d))) for d in ds for r in RATIOS]


def configs(full: bool = True) -> list[TrainConfig]:
    """Every run of the grid (``full``) or of the chapter's ``SUBSET``."""
    ds, lrs = (DS, LRS) if full else (SUBSET["ds"], SUBSET["lrs"])
    return [
        TrainConfig(**COMMON, **setup, d=d, n=n, lr=lr, seed=s)
        for setup in SETUPS.values()
        for d, n in points(ds)
        for lr in lrs
        for s in SEEDS
    ]


def setup_of(config: TrainConfig) -> str:
    """The name in ``SETUPS`` of a grid run."""
    for name, kw in SETUPS.items():
        if all(getattr(config, k) == v for k, v in kw.items()):
            return name
    raise ValueError(f"{config} is not a run of the grid")


def predictions(d: int, n: int, lr: float) -> dict[str, float]:
    """The theory at (d, n) and step size ``lr`` (cached on disk)."""
    key = _cache.code_key(__name__, d=d, n=n, lr=lr)
    out = _cache.arrays("where", key, lambda: _predict(d, n, lr))
    return {k: float(v) for k, v in out.items()}


def _predict(d: int, n: int, lr: float) -> dict[str, float]:
    sm = theory.draw(Task("sphere", d, n), SAMPLES, 1, cache=False)
    opt = theory.no_ln_optimum(sm, "normalized")
    T = {k: s["steps"] for k, s in SETUPS.items()}

    def last(F, steps):  # gamma_T (rho_T) of the recursion from w=0, v=1
        _, w, v = dynamics.run(F, 0.0, 1.0, lr, steps, [steps])
        return float(w[-1] * v[-1])

    no_ln = dynamics.no_ln_F(opt["kappa2"], opt["gamma_star"], d)
    gamma = last(lambda g: theory.ln_layer_dloss(sm, g) / d, T["LN layer"])
    rho = last(lambda r: theory.looped_dloss(sm, r, LOOPS) / d, T["looped"])
    g0 = last(no_ln, T["no LN"])
    return {
        "gamma_star": opt["gamma_star"],
        "loss_star": opt["loss"],
        "no_ln_gamma_T": g0,
        "no_ln_loss_T": float(theory.no_ln_loss(sm, g0, "normalized")),
        "ln_gamma_T": gamma,
        "ln_loss_T": float(theory.ln_layer_loss(sm, gamma)),
        "rho_T": rho,
        "looped_loss_T": float(theory.looped_loss(sm, rho, LOOPS)),
        "looped_loss_0": float(theory.looped_loss(sm, 0.0, LOOPS)),
        "looped_loss_inf": theory.power_method_loss(sm, LOOPS).value,
    }


def loop_rate(h, seed: int = 7) -> dict[str, float]:
    """Per-loop rate of a trained looped model run for ``INFERENCE``
    loops on fresh test points, and the power method's on the same points:
    the median over points of the change of log(sin angle) per loop, from
    loop 1 to the last."""
    c, L = h.config, INFERENCE["loops"]
    X, a = Task(c.task, c.d, c.n).sample(INFERENCE["points"], generator(seed))
    P, _ = principal_projector(X)
    power = inference.sin_angle(inference.power_method(X, a, L), P).numpy()

    def rate(e):
        e = np.clip(e, 1e-300, None)  # exact convergence: no rate to read
        return float(np.median(np.log(e[-1] / e[0]) / (L - 1)))

    learned = inference.loop_errors(h.W, h.V, X, a, L)
    return {"learned_rate": rate(learned), "power_rate": rate(power)}


def rows(configs: list[TrainConfig], histories: list) -> list[dict]:
    """One tidy row per run (``lnpower.sweep.row``) with its set-up, the
    theory's predictions at its (d, n, eta) and, for the looped model, the
    per-loop rates (:func:`loop_rate`)."""
    out = []
    for c, h in zip(configs, histories):
        r = {"setup": setup_of(c), **sweep.row(c, h)}
        r.update(predictions(c.d, c.n, c.lr))
        if r["setup"] == "looped" and r["status"] == "ok":
            r.update(loop_rate(h))
        out.append(r)
    return out


STORED_TABLE = _cache.STORED / "where-sweep.json"


# the training code, whose numbers the runs' keys already version
# (lnpower.train.NUMBERS): a new normalisation or a tidier engine keeps the
# stored table
TRAINING = ("train", "engine", "optimisers", "history", "config", "model")


def table_key() -> dict:
    """What the stored table was computed by and for: the runs' keys
    (:func:`lnpower.train.run_key`, with the seed shift) and the code that
    turns them into rows (this module and what it imports, but not the
    training code nor the torch version, which the run keys stand for)."""
    keys = "\n".join(run_key(c) for c in configs(True))
    rows = tuple(
        m
        for m in _cache.closure("chapters/where")
        if m not in TRAINING and not m.startswith("norms/")
    )
    return {
        "runs": hashlib.sha256(keys.encode()).hexdigest()[:20],
        "rows": _cache.code_hash(rows, torch_version=False)[:12],
    }


@memo
def table(full: bool) -> list[dict] | None:
    """The rows of the full grid or the chapter's subset: trained through
    ``lnpower.sweep`` (runs in the cache are read, the rest trained on a
    local cluster); ``full`` only if every run is in the cache, else None."""
    cs = configs(full)
    if full and not all(sweep.is_cached(c) for c in cs):
        return None
    return rows(cs, sweep.run(cs, progress=False))


def stored() -> list[dict] | None:
    """The full grid's rows stored with the library, if they were computed
    by the code and for the grid of now (else None)."""
    if not STORED_TABLE.exists():
        return None
    data = json.loads(STORED_TABLE.read_text())
    return data["rows"] if data["key"] == table_key() else None


def store() -> Path:
    """Train the full grid (``lnpower.sweep``, resumable) and write its
    rows beside the library (``python -m lnpower stored-runs --name
    where``)."""
    cs = configs(True)
    data = {"key": table_key(), "rows": rows(cs, sweep.run(cs))}
    return _cache.atomic_write(
        STORED_TABLE, lambda tmp: tmp.write_text(json.dumps(data) + "\n")
    )


# --- the chapter's claims, on the subset it trains (d = 4 and 8, n = d/2
# to 8d, eta = 0.1, 3 seeds)


def per_seed(setup: str, value) -> np.ndarray:
    """``value(row)`` worst (largest) over the subset's points, per seed."""
    rows = [r for r in table(False) if r["setup"] == setup]
    return np.array(
        [max(value(r) for r in rows if r["seed"] == s) for s in SEEDS]
    )


def where_ln_recursion():
    dev = per_seed(
        "LN layer", lambda r: abs(r["product"] / r["ln_gamma_T"] - 1)
    )
    return over_seeds(
        dev, dev < 0.1, quantity="the largest relative deviation"
    )


def where_no_ln_gap():
    gaps = {
        d: [
            predictions(d, n, 0.1)["loss_star"]
            for dd, n in points()
            if dd == d
        ]
        for d in DS
    }
    falling = all(np.all(np.diff(g) < 0) for g in gaps.values())
    last = min(g[-1] for g in gaps.values())
    return (
        round(last, 4),
        verdict(falling and last > 0.05),
        f"the smallest L* at n = 8d: {last:.4f}; L* from n = d/2 to 8d: "
        + "; ".join(
            f"d = {d}: {g[0]:.3f} to {g[-1]:.3f}" for d, g in gaps.items()
        ),
    )


def where_looped_rate():
    ratio = per_seed("looped", lambda r: r["learned_rate"] / r["power_rate"])
    return over_seeds(
        ratio,
        ratio < 0.75,
        quantity="the largest ratio of learned to power-method rate",
    )
