"""The SGD runs at the paper's settings that several chapters share, as seed
ensembles: a claim about SGD is measured over ``ENSEMBLE`` seeds per
configuration (``LOOPED_ENSEMBLE`` for the looped model, whose runs cost ten
times more, and are stored with the library). Seed ``s`` is the same run
wherever it is asked for (the stored runs and the training cache, both
keyed by :func:`lnpower.train.run_key`); ``LNPOWER_SEED`` shifts them
all."""

from __future__ import annotations

from .. import cache as _cache
from .. import seeding
from ..cache import memo
from ..config import paper_config
from ..history import History
from ..tasks import TASKS
from ..train import fit_many
from . import stored_runs

ENSEMBLE = 5  # seeds per SGD configuration
# seeds of the looped model (about 80 s a seed on one core)
LOOPED_ENSEMBLE = 3
# seed bases pooled for a claim whose status changed with the base: 3 x 5
POOLED_BASES = 3


@memo
def paper_runs(
    model: str,
    seed: int = 0,
    wait: bool = True,
    shift: int | None = None,
    **overrides,
) -> dict[str, History]:
    """SGD at the paper's settings for Task 1 and Task 2 (one seed): the
    runs stored with the library (:mod:`.stored_runs`) where they are
    stored, else trained together and cached. ``wait=False``: raise
    ``lnpower.cache.Busy`` if another process is training them now.
    ``shift``: the seed shift (default ``LNPOWER_SEED``)."""
    configs = [
        paper_config(model=model, task=t, seed=seed, **overrides)
        for t in TASKS
    ]
    runs = [stored_runs.lookup(c, shift) for c in configs]
    if None in runs:
        runs = fit_many(configs, cache=True, wait=wait, shift=shift)
    return dict(zip(TASKS, runs))


def ensemble_size(model: str) -> int:
    """How many seeds a claim about this model is measured over."""
    return LOOPED_ENSEMBLE if model == "looped" else ENSEMBLE


def ensemble(
    model: str, size: int | None = None, shift: int | None = None, **overrides
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
                    done[s] = paper_runs(model, s, wait, shift, **overrides)
                except _cache.Busy:
                    pass
    return {t: [done[s][t] for s in range(size)] for t in TASKS}


def pooled(
    model: str, bases: int = POOLED_BASES, **overrides
) -> dict[int, dict[str, list[History]]]:
    """:func:`ensemble` under ``bases`` seed bases, the shift k of
    ``LNPOWER_SEED`` and the next ones (k, k + 1, ...): ``{shift: {task:
    [history per seed]}}``. For a claim whose status changed from one base
    to another, judged on the pool (3 x 5 seeds)."""
    k = seeding.shift()
    return {
        b: ensemble(model, shift=b, **overrides) for b in range(k, k + bases)
    }
