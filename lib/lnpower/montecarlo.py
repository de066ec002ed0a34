"""Monte Carlo for the paper's population quantities: draws of (X, a)
reduced to what the theory needs (the spectrum of S and the coordinates of a
in its eigenbasis), and means with their standard errors. Float64, seeded."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
import torch

from . import cache as _cache
from .tasks import Task, generator, query, top_mask


@dataclass(frozen=True)
class Estimate:
    """A Monte Carlo mean with its standard error."""

    value: float
    stderr: float

    def __float__(self) -> float:
        return self.value

    def __format__(self, spec: str) -> str:
        return f"{format(self.value, spec)} ± {format(self.stderr, spec)}"


def mean(x) -> Estimate:
    """Sample mean and standard error of a 1-D array."""
    x = np.asarray(x, dtype=np.float64)
    return Estimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))))


@dataclass(frozen=True)
class Sample:
    """Monte Carlo draws of (X, a) reduced to what the theory needs
    (float64 numpy).

    ``lam`` ``(K, d)`` eigenvalues of S (descending), ``c2`` ``(K, d)``
    squared coordinates of a in the eigenbasis, ``s`` = ||Sa||, ``q`` = a^T
    S a, ``top`` ``(K, d)`` mask of the principal subspace (multiplicity r
    within ``rtol``)."""

    task: Task
    lam: np.ndarray
    c2: np.ndarray
    top: np.ndarray
    s: np.ndarray
    q: np.ndarray

    @classmethod
    def from_spectrum(cls, task: Task, lam, c2, rtol: float = 1e-8) -> Sample:
        """Build from eigenvalues (descending) and squared coordinates of a."""
        lam = np.clip(np.asarray(lam, dtype=np.float64), 0.0, None)
        c2 = np.array(
            c2, dtype=np.float64
        )  # a copy: the caller's array stays writable
        arrays = (
            lam,
            c2,
            top_mask(lam, rtol),
            np.sqrt((lam**2 * c2).sum(-1)),
            (lam * c2).sum(-1),
        )
        for (
            x
        ) in arrays:  # a Sample may be shared (see draw): nobody may change it
            x.setflags(write=False)
        return cls(task, *arrays)

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the draws: names this sample in cache keys."""
        return _cache.fingerprint(self.lam, self.c2)


def _eigenvalues(X: torch.Tensor) -> np.ndarray:
    """Eigenvalues of X X^T, descending: ``(K, d)``."""
    return torch.linalg.eigvalsh(X @ X.mT).flip(-1).numpy()


def memory_bytes(task: Task, samples: int, chunk: int = 50_000) -> int:
    """About how much memory a sample of ``samples`` draws takes to draw and
    use: some sixteen float64 arrays of samples x d (the spectrum, the
    coordinates and what the theory computes from them) and one chunk of
    matrices X for the eigensolver."""
    return 8 * (
        16 * samples * task.d + 4 * min(chunk, samples) * task.d * task.n
    )


def check_memory(task: Task, samples: int, chunk: int = 50_000) -> None:
    """``MemoryError`` in one line, before any work, if :func:`memory_bytes`
    is more than the memory available now."""
    from .config import available_memory

    need, have = memory_bytes(task, samples, chunk), available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"{samples} draws need about {need / 2**30:.1f} GiB of memory, "
            f"{have / 2**30:.1f} GiB is available: use fewer samples"
        )


@lru_cache(maxsize=8)
def draw(
    task: Task,
    samples: int = 200_000,
    seed: int = 0,
    chunk: int = 50_000,
    rtol: float = 1e-8,
    cache=True,
) -> Sample:
    """Draw ``samples`` pairs (X, a) from ``task`` and reduce them (see
    :class:`Sample`).

    Only the spectrum of S needs an eigensolver: since a is uniform on the
    sphere and independent of X, its coordinates c = V^T a in the
    eigenbasis of S are uniform on the sphere and independent of the
    eigenvalues, for any law of X. Task 2's spectrum is m exactly. Where
    an eigensolver runs (Task 1: 8 s for 2e5 samples on one core) the
    spectrum and coordinates go to the disk cache (``cache``, as in
    :func:`lnpower.cache.directory`), so that every chapter draws a sample
    once."""
    if samples < 2:
        raise ValueError(f"samples must be >= 2, got {samples}")
    check_memory(task, samples, chunk)
    if task.name == "rotated":
        lam = np.broadcast_to(
            np.array(sorted(task.m, reverse=True), float), (samples, task.d)
        )
        c = query(samples, task.d, generator(seed))
        return Sample.from_spectrum(task, lam, (c**2).numpy(), rtol)
    out = _cache.arrays(
        "draw",
        [repr(task), samples, seed, chunk],
        ("montecarlo", "tasks"),
        lambda: _spectra(task, samples, generator(seed), chunk),
        cache,
    )
    return Sample.from_spectrum(task, out["lam"], out["c2"], rtol)


def _spectra(task: Task, samples: int, g, chunk: int) -> dict[str, np.ndarray]:
    """Eigenvalues of S for ``samples`` draws of X, then the squared
    coordinates of a (drawn after every X, from the same generator)."""
    # sampling the next chunk overlaps with the eigensolver on the previous
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = [
            pool.submit(
                _eigenvalues, task.sample_X(min(chunk, samples - i), g)
            )
            for i in range(0, samples, chunk)
        ]
        lam = np.concatenate([job.result() for job in jobs])
    c = query(samples, task.d, g)
    return {"lam": lam, "c2": (c**2).numpy()}
