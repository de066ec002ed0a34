"""The SGD runs at the paper's settings that several chapters share, as seed
ensembles: a claim about SGD is measured over ``ENSEMBLE`` seeds per
configuration (``LOOPED_ENSEMBLE`` for the looped model, whose runs cost ten
times more). Seed ``s`` is the same run wherever it is asked for (the
training cache, keyed by :func:`lnpower.train.run_key`); ``LNPOWER_SEED``
shifts them all."""

from __future__ import annotations

from .. import cache as _cache
from ..cache import memo
from ..config import paper_config
from ..history import History
from ..tasks import TASKS
from ..train import fit_many

ENSEMBLE = 5  # seeds per SGD configuration
LOOPED_ENSEMBLE = 3  # seeds of the looped model (about 22 s a run on 2 cores)


@memo
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
