"""The runs and samples that several chapters and claims share, each
computed once: Monte Carlo samples, the reduced population dynamics, and the
SGD runs at the paper's settings with their seed ensembles (through the
training cache, so that a chapter, another chapter and the reproduction
report reuse the same runs).

A claim about SGD is measured over an ensemble of seeds (``ensemble``):
``ENSEMBLE`` seeds per configuration, ``LOOPED_ENSEMBLE`` for the looped
model, whose runs cost ten times more. Seed ``s`` is the same run wherever
it is asked for; ``LNPOWER_SEED`` shifts them all (``lnpower.seeding``)."""

from __future__ import annotations

from functools import cache

from . import cache as _cache
from . import dynamics, theory
from .config import PAPER, paper_config
from .history import History
from .tasks import Task
from .train import fit_many

ETA = PAPER.lr
TASKS = {
    "sphere": "Task 1",
    "rotated": "Task 2",
}  # the paper's names of the two tasks
# the sample of the constants of Theorem 4.2, as book/without_ln draws it
BIG = 200_000
ENSEMBLE = 5  # seeds per SGD configuration
LOOPED_ENSEMBLE = 3  # seeds of the looped model (about 22 s a run on 2 cores)
# The two readings of the paper's "an epoch number of 2000": T = 2000 SGD
# iterations (the book's default), or 2000 passes without replacement over the
# 10 000 training samples
READINGS = {
    "iterations": PAPER.steps,
    "epochs": PAPER.epoch_steps(PAPER.steps),
}


# Fig. 3's grid of (d, n) (Appendix G.1)
FIG3 = tuple((d, n) for d in (8, 16) for n in (16, 32, 64))


def tasks_at(d: int, n: int) -> tuple[str, ...]:
    """The tasks that exist at (d, n): Task 2 only where n > d (at n <= d
    its multiplicities force S = I)."""
    return tuple(t for t in TASKS if t == "sphere" or n > d)


def paper_task(name: str = "sphere") -> Task:
    """Task 1 (``"sphere"``) or Task 2 (``"rotated"``) at the paper's d and
    n."""
    return Task(name, PAPER.d, PAPER.n)


@cache
def sample(
    task: str = "sphere", samples: int = 100_000, seed: int = 0
) -> theory.Sample:
    """A Monte Carlo sample of the task at the paper's d and n."""
    return theory.draw(paper_task(task), samples, seed)


def _from_rest(tab: dynamics.Table, steps: int):
    """``steps`` of the reduced dynamics on ``tab`` from the paper's
    initialisation (the active weight that starts at 0, the other at v0),
    logged at T and at log-spaced steps."""
    logged = [PAPER.steps, *dynamics.log_steps(steps)]
    return dynamics.run(tab, 0.0, PAPER.v0, ETA, steps, logged)


@cache
def ln_run(task: str = "sphere", steps: int = 10**6):
    """The LN layer's reduced population dynamics (Theorem 4.3) from
    alpha=0, beta=1."""
    tab = dynamics.ln_layer_table(sample(task, 20_000, 1))
    return tab, _from_rest(tab, steps)


@cache
def looped_F(task: str = "sphere", loops: int = 10) -> dynamics.Table:
    """F = L_L'/d of the looped model, tabulated from 5 000 samples."""
    return dynamics.looped_table(sample(task, 5_000, 1), loops)


@cache
def looped_run(task: str = "sphere", loops: int = 10, steps: int = 10**6):
    """The looped model's reduced population dynamics (Theorem 4.1) from
    w=0, v=1."""
    tab = looped_F(task, loops)
    return tab, _from_rest(tab, steps)


@cache
def paper_runs(
    model: str, seed: int = 0, wait: bool = True, **overrides
) -> dict[str, History]:
    """SGD at the paper's settings for Task 1 and Task 2 (one seed), trained
    together and cached. ``wait=False``: raise ``lnpower.cache.Busy`` if
    another process is training them now."""
    configs = [
        paper_config(model=model, task=t, seed=seed, **overrides)
        for t in TASKS
    ]
    return dict(zip(TASKS, fit_many(configs, cache=True, wait=wait)))


def ensemble_size(model: str) -> int:
    """How many seeds a claim about this model is measured over."""
    return LOOPED_ENSEMBLE if model == "looped" else ENSEMBLE


def ensemble(
    model: str, size: int | None = None, **overrides
) -> dict[str, list[History]]:
    """``paper_runs`` for seeds 0..size-1 (default :func:`ensemble_size`):
    per task, one history per seed. Seeds that another process is training
    now are taken last, so two chapters that need the same ensemble share
    the work."""
    size = size or ensemble_size(model)
    done = {}
    for wait in (False, True):
        for s in range(size):
            if s not in done:
                try:
                    done[s] = paper_runs(model, s, wait, **overrides)
                except _cache.Busy:
                    pass
    return {t: [done[s][t] for s in range(size)] for t in TASKS}


def fig3_runs(seed: int = 0) -> dict:
    """The LN layer at each configuration of Fig. 3 (Task 2 needs n > d),
    cached; the tasks of one (d, n) are trained together, so (16, 32) are
    the runs of Figs. 2 and 4."""
    runs = {}
    for d, n in FIG3:
        names = tasks_at(d, n)
        pair = fit_many(
            [paper_config(task=t, d=d, n=n, seed=seed) for t in names],
            cache=True,
        )
        runs.update({(t, d, n): h for t, h in zip(names, pair)})
    return {
        (t, d, n): runs[t, d, n]
        for t in TASKS
        for d, n in FIG3
        if (t, d, n) in runs
    }


# Part V's runs (the chapters beyond and beyond_training)


def random_init_runs(scale: float = 0.05, seeds=(0, 1, 2)):
    """LN layer from small Gaussian weights in every block (v0 = 0), trained
    together, cached."""
    return fit_many(
        [
            paper_config(model="layer", v0=0.0, init_scale=scale, seed=s)
            for s in seeds
        ],
        cache=True,
    )


def sample_size_runs(sizes=(100, 1000, 10_000), seed: int = 0):
    """LN layer at the paper's settings with training sets of several sizes
    (cached)."""
    return {
        N: fit_many(
            [paper_config(model="layer", train_size=N, seed=seed)], cache=True
        )[0]
        for N in sizes
    }


def adam_runs(lr: float = 1e-3, seeds=(0, 1, 2)):
    """The LN layer trained by Adam at the paper's other settings (cached)."""
    return fit_many(
        [
            paper_config(model="layer", optimizer="adam", lr=lr, seed=s)
            for s in seeds
        ],
        cache=True,
    )


@cache
def adam_population(lr: float = 1e-3, steps: int = 10**5):
    """Adam on the LN layer's reduced population loss, from (alpha, beta) =
    (0, 1)."""
    tab, _ = ln_run()
    return dynamics.run_adam(
        tab, 0.0, 1.0, lr, steps, [2000, *dynamics.log_steps(steps)]
    )
