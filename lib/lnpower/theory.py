"""The paper's population quantities (§4.1-4.2, Appendices A-C), by float64
Monte Carlo with a seed and a standard error.

- the sample: draws of (X, a) reduced to what the theory needs (the
  spectrum of S and the coordinates of a in its eigenbasis; ``Sample``,
  ``draw``) and means with their standard errors (``Estimate``, ``mean``);
- the constants: the moments kappa, the Upsilons and C1, gamma* and the
  irreducible losses, the checks of Assumption (A3);
- the loss landscapes of the three models under the structure (4.2), as
  functions of one number: the layer without LN (a quadratic in gamma,
  Theorem 4.2), the layer with LN (Theorem 4.3) and the looped model (the
  eigen-expansion of Dist^2, Theorem 4.1), with their derivatives, the
  power method's error L_L^(inf) and the constant c_L.

Per-sample summaries used throughout: ``s = ||S a||``, ``q = a^T S a`` and,
for looped models, the eigenvalues ``lam`` of S (descending) with ``c2 =
<v_i, a>^2``."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from . import cache as _cache
from .devices import available_memory
from .tasks import Task, generator, query, top_mask

# --- the sample


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
    def data_hash(self) -> str:
        """A hash of the draws: names this sample in cache keys."""
        return _cache.data_hash(self.lam, self.c2)


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
    need, have = memory_bytes(task, samples, chunk), available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"{samples} draws need about {need / 2**30:.1f} GiB of memory, "
            f"{have / 2**30:.1f} GiB is available: use fewer samples"
        )


@_cache.memo(maxsize=8)
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
    key = _cache.code_key(
        __name__,
        task=task.name,
        d=task.d,
        n=task.n,
        samples=samples,
        seed=seed,
        chunk=chunk,
    )
    out = _cache.arrays(
        "draw",
        key,
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


# --- the constants


def kappas(sample: Sample) -> dict[str, Estimate]:
    """kappa1 = E[a^T S a], kappa2 = E||Sa||^2, kappa3 = E||Sa|| (Appendix
    B)."""
    return {
        "kappa1": mean(sample.q),
        "kappa2": mean(sample.s**2),
        "kappa3": mean(sample.s),
    }


def kappas_exact(task: Task) -> dict[str, float]:
    """Closed forms (derived): kappa1 = n/d for both tasks; kappa2 =
    n(n+d-1)/d^2 (Task 1) or sum(m_i^2)/d (Task 2). kappa3 has none."""
    d, n = task.d, task.n
    k2 = (
        n * (n + d - 1) / d**2
        if task.name == "sphere"
        else sum(mi**2 for mi in task.m) / d
    )
    return {"kappa1": n / d, "kappa2": k2}


def upsilon(sample: Sample) -> Estimate:
    """Upsilon(n, d) = E[1 / lambda_d(X)] of Assumption (A3)."""
    return mean(1.0 / sample.lam[:, -1])


def upsilon3(sample: Sample) -> Estimate:
    """Upsilon_3 = E[(||Sa||^2 ||a||^2 - (a^T S a)^2) / ||Sa||^4] (Appendix
    C.2.2)."""
    s, q = sample.s, sample.q
    return mean((s**2 - q**2) / s**4)


def C1(sample: Sample) -> Estimate:
    """C1 = 2 Upsilon_3 / d, the constant of Theorem 4.3's gamma^3
    increment (Appendix C.2.2)."""
    u, d = upsilon3(sample), sample.task.d
    return Estimate(2 * u.value / d, 2 * u.stderr / d)


def no_ln_optimum(sample: Sample, target: str) -> dict[str, float]:
    """gamma* and the irreducible loss L(gamma*) of the layer without LN
    (Theorem 4.2): normalized: gamma1* = (kappa3 - kappa1)/kappa2, L1* =
    E[2 - 2 a^T S a/||Sa||] - (k3-k1)^2/k2; unnormalized: gamma2* = 1 -
    kappa1/kappa2, L2* = 1 - kappa1^2/kappa2. Also the Cauchy-Schwarz lower
    bound E[1 - (a^T S a)^2/||Sa||^2] for the normalized case."""
    s, q = sample.s, sample.q
    k1, k2, k3 = q.mean(), (s**2).mean(), s.mean()
    if target == "normalized":
        g = (k3 - k1) / k2
        loss = (2 - 2 * q / s).mean() - (k3 - k1) ** 2 / k2
        return {
            "gamma_star": g,
            "loss": loss,
            "lower_bound": (1 - q**2 / s**2).mean(),
            "kappa2": k2,
        }
    if target == "unnormalized":
        return {
            "gamma_star": 1 - k1 / k2,
            "loss": 1 - k1**2 / k2,
            "kappa2": k2,
        }
    raise ValueError(
        f"target must be 'normalized' or 'unnormalized', got {target!r}"
    )


def constants(
    task: Task,
    samples: int = 200_000,
    seed: int = 0,
    loops: int | None = None,
    sample: Sample | None = None,
) -> dict[str, Estimate | float]:
    """Every constant of the theory for ``task`` (what ``python -m lnpower
    theory`` prints)."""
    sm = sample or draw(task, samples, seed)
    out: dict = dict(kappas(sm))
    for target, key in (
        ("normalized", "normalized"),
        ("unnormalized", "unnormalized"),
    ):
        opt = no_ln_optimum(sm, target)
        out[f"gamma_star_{key}"] = opt["gamma_star"]
        out[f"irreducible_loss_{key}"] = opt["loss"]
    out["cauchy_schwarz_bound"] = no_ln_optimum(sm, "normalized")[
        "lower_bound"
    ]
    out["upsilon"] = upsilon(sm)
    out["upsilon3"] = upsilon3(sm)
    out["C1"] = C1(sm)
    if loops is not None:
        out["power_method_loss"] = power_method_loss(sm, loops)
        out["c_L"] = c_L(sm, loops)
    return out


def tail_index(x, frac: float = 0.01) -> Estimate:
    """Hill estimator of the tail index tau of a positive sample X
    (P(X > u) ~ u^-tau), from its largest ``frac`` share, with the
    asymptotic standard error tau/sqrt(k). E[X] is finite only if tau > 1:
    applied to 1/lambda_d it tests (A3)."""
    x = np.sort(np.asarray(x, dtype=np.float64))[::-1]
    k = max(int(frac * len(x)), 10)
    alpha = 1.0 / np.mean(np.log(x[:k] / x[k]))
    return Estimate(float(alpha), float(alpha / math.sqrt(k)))


def smallest_eigenvalues(
    task: Task, samples: int, seed: int = 0
) -> np.ndarray:
    """lambda_d(X) for ``samples`` draws of X (Assumption A3's variable)."""
    X = task.sample_X(samples, generator(seed))
    return torch.linalg.eigvalsh(X @ X.mT)[:, 0].clamp_min(0).numpy()


# --- the loss landscapes


def no_ln_loss(sample: Sample, gamma, target: str):
    """Population loss of y~ = a + gamma S a against the target (4.4), per
    gamma."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, q = sample.s, sample.q
    if target == "normalized":
        return (1 + 2 * g * q + g**2 * s**2 - 2 * q / s - 2 * g * s + 1).mean(
            -1
        )
    return (1 + 2 * (g - 1) * q + (g - 1) ** 2 * s**2).mean(-1)


def ln_layer_loss(sample: Sample, gamma):
    """Population loss of y = h/||h||, h = a + gamma S a, against Sa/||Sa||
    (4.5): ``E[2 - 2 (omega + x)/sqrt(x^2 + 2 x omega + 1)]`` with
    x = gamma ||Sa||, omega = a^T S a/||Sa||."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, c = sample.s, sample.q / sample.s
    x = g * s
    return (2 - 2 * (x + c) / np.sqrt(x * x + 2 * x * c + 1)).mean(-1)


def ln_layer_dloss(sample: Sample, gamma):
    """d/dgamma of :func:`ln_layer_loss`: ``-2 E[s (1 - omega^2) / (x^2 +
    2 x omega + 1)^{3/2}]`` with omega = a^T S a/||Sa||."""
    g = np.asarray(gamma, dtype=np.float64)[..., None]
    s, c = sample.s, sample.q / sample.s
    x = g * s
    t = x * x + 2 * x * c + 1
    return (-2 * s * (1 - c * c) / (t * np.sqrt(t))).mean(-1)


def _ipow(x: np.ndarray, k: int) -> np.ndarray:
    """``x**k`` for an integer k >= 1 by repeated squaring (several times
    faster than a general power on large arrays)."""
    out = None
    while k:
        if k & 1:
            out = x.copy() if out is None else out * x
        k >>= 1
        if k:
            x = x * x
    return out


def _looped_terms(sample: Sample, rho, L: int):
    """Weights c_i^2 (mu_i/mu_1)^{2L} and their rho-derivatives, mu_i = 1 +
    rho lam_i; shapes ``(*rho.shape, K, d)``."""
    rho = np.asarray(rho, dtype=np.float64)[..., None, None]
    mu = 1 + rho * sample.lam
    w = sample.c2 * _ipow(mu / mu[..., :1], 2 * L)
    dw = w * 2 * L * (sample.lam / mu - sample.lam[:, :1] / mu[..., :1])
    return w, dw


def looped_loss(sample: Sample, rho, L: int):
    """L_L(rho) = E[Dist^2((I + rho S)^L a / ||.||, V(X))] under the
    structure (4.2)."""
    w, _ = _looped_terms(sample, rho, L)
    return (np.where(sample.top, 0, w).sum(-1) / w.sum(-1)).mean(-1)


def looped_dloss(sample: Sample, rho, L: int):
    """d L_L / d rho, from the eigen-expansion of :func:`looped_loss`."""
    w, dw = _looped_terms(sample, rho, L)
    perp, dperp = (
        np.where(sample.top, 0, w).sum(-1),
        np.where(sample.top, 0, dw).sum(-1),
    )
    tot, dtot = w.sum(-1), dw.sum(-1)
    return ((dperp * tot - perp * dtot) / tot**2).mean(-1)


def power_method_loss(sample: Sample, L: int) -> Estimate:
    """L_L^(inf) = E[Dist^2(S^L a/||S^L a||, V(X))]: the error of L power
    iterations (Thm 4.1)."""
    p = sample.c2 * (sample.lam / sample.lam[:, :1]) ** (2 * L)
    return mean(np.where(sample.top, 0, p).sum(-1) / p.sum(-1))


def c_L(sample: Sample, L: int) -> Estimate:
    """c_L in L_L(rho) = L_L^(inf) + c_L/rho + o(1/rho) (derived, Appendix
    A.5): ``c_L = E[2L Pi_top sum_perp p_i (1/lam_i - 1/lam_1) / Pi^2]``,
    p_i = c_i^2 lam_i^{2L}, Pi = sum p_i, Pi_top the sum over the top
    eigenvalue."""
    lam = sample.lam / sample.lam[:, :1]
    p = sample.c2 * lam ** (2 * L)
    perp = np.where(
        sample.top, 0, p * (1 / np.clip(lam, 1e-300, None) - 1)
    ).sum(-1)
    P, Ptop = p.sum(-1), np.where(sample.top, p, 0).sum(-1)
    return mean(2 * L * Ptop * perp / P**2 / sample.lam[:, 0])
