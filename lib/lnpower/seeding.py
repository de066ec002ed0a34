"""One setting shifts every seed the book uses: ``LNPOWER_SEED``.

Every random number of the library is drawn from a ``torch.Generator`` made
by :func:`lnpower.tasks.generator` (training data, minibatches, initial
weights, test points, Monte Carlo samples), which reads the shift here or
is given it (training passes it down explicitly, so a sweep's workers use
the client's shift without changing their environment). With
``LNPOWER_SEED`` unset or ``0`` a seed ``s`` is used as it is; with
``LNPOWER_SEED=k`` it becomes an independent seed mixed from ``(s, k)``, so
that every draw of the book is replaced by another, and a verdict that
holds only for the default seeds shows itself. The cache's keys and memos
include the shift (``lnpower.cache``).
"""

from __future__ import annotations

import os

import numpy as np

ENV = "LNPOWER_SEED"


def shift() -> int:
    """The seed shift ``LNPOWER_SEED`` (0 when unset); ``ValueError`` naming
    the variable if it is not a non-negative integer."""
    raw = os.environ.get(ENV, "").strip() or "0"
    try:
        k = int(raw)
    except ValueError:
        raise ValueError(
            f"{ENV} must be a non-negative integer, got {raw!r}"
        ) from None
    if k < 0:
        raise ValueError(f"{ENV} must be a non-negative integer, got {k}")
    return k


def mix(seed: int, k: int | None = None) -> int:
    """The seed actually used for ``seed`` under the shift ``k`` (default
    :func:`shift`): itself without a shift, else a 64-bit seed drawn by
    ``numpy.random.SeedSequence`` from ``(seed, k)``."""
    k = shift() if k is None else k
    if k == 0:
        return int(seed)
    state = np.random.SeedSequence([int(seed), k]).generate_state(2, np.uint32)
    return (int(state[0]) << 31) ^ int(state[1])
