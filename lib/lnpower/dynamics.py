"""The exact reduced (scalar) population dynamics of Theorems 4.1, 4.2 and 4.3.

Under the structure (4.2) matrix gradient descent on (W, V) is exactly ``w' = w
- eta v F(w v)``, ``v' = v - eta w F(w v)`` with ``F = L'/d``: the gradient
with respect to W12 = w I is ``(L'(wv)/d) v I`` (Appendices A, B.1 and C.2.1,
step 1). For the LN layer and the looped model F is tabulated once
(:class:`Table`), so that 10^6 steps take seconds."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from . import cache as _cache
from . import theory
from .optimisers import ADAM


def _advance(F, w: float, v: float, eta: float, m: int, t0: int = 0):
    """``m`` steps of the recursion for any callable F."""
    for i in range(m):
        f = eta * F(w * v)
        if not math.isfinite(f):
            raise FloatingPointError(
                f"reduced dynamics diverged at step {t0 + i}"
            )
        w, v = w - v * f, v - w * f
    return w, v


def run(
    F, w0: float, v0: float, eta: float, steps: int, record=None, cache=True
):
    """Iterate ``w' = w - eta v F(wv)``, ``v' = v - eta w F(wv)`` for
    ``steps`` steps.

    ``record``: step numbers at which to store (t, w, v) (those outside
    0..steps are ignored); default every step. Returns numpy arrays ``(t,
    w, v)``. A run on a :class:`Table` with a ``record``
    goes to the disk cache (``cache``, see :func:`lnpower.cache.directory`):
    10^7 steps take seconds."""
    if eta <= 0 or steps < 0:
        raise ValueError("eta must be > 0 and steps >= 0")
    rec = (
        range(steps + 1)
        if record is None
        else sorted({int(t) for t in record if 0 <= t <= steps})
    )

    def compute():
        advance = F.advance if isinstance(F, Table) else partial(_advance, F)
        ts, ws, vs = [], [], []
        t, w, v = 0, float(w0), float(v0)
        for r in rec:
            w, v = advance(w, v, eta, r - t, t)
            t = r
            ts.append(t)
            ws.append(w)
            vs.append(v)
        return {"t": np.array(ts), "w": np.array(ws), "v": np.array(vs)}

    if isinstance(F, Table) and record is not None:
        key = _cache.code_key(
            __name__,
            table=_cache.data_hash(F.logF, [F.h, F.scale, F.slope]),
            w0=float(w0),
            v0=float(v0),
            eta=eta,
            steps=steps,
            record=_cache.data_hash(rec),
        )
        out = _cache.arrays("dynamics", key, compute, cache)
    else:
        out = compute()
    return out["t"], out["w"], out["v"]


def run_adam(F, w0: float, v0: float, lr: float, steps: int, record=None):
    """Adam (torch.optim.Adam's update and defaults) on the reduced loss:
    the scalars w, v with gradients ``v F(wv)``, ``w F(wv)``. Under the
    structure every diagonal entry of W12 (V21) sees the same gradient, F
    v/d, and Adam is blind to the common factor 1/d (up to its epsilon), so
    this is matrix Adam on the population loss. Returns ``(t, w, v)`` like
    :func:`run`."""
    b1, b2, eps = ADAM
    rec = set(range(steps + 1) if record is None else record)
    w, v, m, s = float(w0), float(v0), [0.0, 0.0], [0.0, 0.0]
    out = [(0, w, v)] if 0 in rec else []
    for t in range(1, steps + 1):
        f = F(w * v)
        for i, g in enumerate((v * f, w * f)):
            m[i] = b1 * m[i] + (1 - b1) * g
            s[i] = b2 * s[i] + (1 - b2) * g * g
        step = [
            lr / (1 - b1**t) * m[i] / (math.sqrt(s[i] / (1 - b2**t)) + eps)
            for i in (0, 1)
        ]
        w, v = w - step[0], v - step[1]
        if t in rec:
            out.append((t, w, v))
    return tuple(np.array(x) for x in zip(*out))


def no_ln_F(kappa2: float, gamma_star: float, d: int):
    """F(gamma) = (2 kappa2/d)(gamma - gamma*) of the layer without LN
    (Theorem 4.2)."""
    k = 2 * kappa2 / d
    return lambda g: k * (g - gamma_star)


def log_steps(steps: int, points: int = 200) -> list[int]:
    """0 and ``points`` log-spaced steps up to ``steps`` (for long runs)."""
    return sorted(
        {0, *np.unique(np.geomspace(1, steps, points).astype(int)).tolist()}
    )


def exponent(t, y, t_lo: float, t_hi: float):
    """Growth exponent of y ~ t^p fitted by least squares on log-log axes
    over ``t_lo <= t <= t_hi``, with the range of the local slopes in that
    window as its interval. Returns ``(p, p_min, p_max)``."""
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    keep = (t >= t_lo) & (t <= t_hi) & (t > 0) & (y > 0)
    if keep.sum() < 3:
        raise ValueError(
            f"need at least 3 points in [{t_lo}, {t_hi}], got {keep.sum()}"
        )
    lt, ly = np.log(t[keep]), np.log(y[keep])
    p = float(np.polyfit(lt, ly, 1)[0])
    local = np.diff(ly) / np.diff(lt)
    return p, float(local.min()), float(local.max())


def power_increment(F, w: float, v: float, eta: float, k: int) -> float:
    """``p'^k - p^k`` for p = w v over one step of the reduced dynamics (k
    = 2: Theorem 4.1's rho^2 increment; k = 3: Theorem 4.3's gamma^3
    increment). With ``delta = p' - p = -eta (w^2 + v^2) F + eta^2 p F^2``
    (Appendix B.2.3) the difference is factored as ``delta * sum_j p'^j
    p^(k-1-j)``, so no two numbers of size p^k are subtracted."""
    p, f = w * v, F(w * v)
    delta = -eta * (w * w + v * v) * f + eta * eta * p * f * f
    return delta * sum((p + delta) ** j * p ** (k - 1 - j) for j in range(k))


# --- F = L'/d of the LN layer and of the looped model, tabulated once on a
# grid uniform in u = log(1 + rho) (log(-F) interpolated linearly, so power
# laws are followed exactly in the tail); Table.max_rel_error bounds the
# interpolation error against direct evaluation


@dataclass
class Table:
    """F(rho) = L'(rho)/d on the grid ``u_k = k h``, ``rho = scale (exp(u)
    - 1)``, stored as log(-F). ``exact`` evaluates F directly (vectorised
    over rho)."""

    h: float
    scale: float
    logF: list[float]
    # d log(-F) / d log(rho) beyond the grid (power-law extrapolation)
    slope: float
    exact: object

    @classmethod
    def build(
        cls,
        F_exact,
        rho_max: float = 1e7,
        points: int = 3000,
        scale: float = 1e-2,
        chunk: int = 4,
        key=None,
        cache=True,
    ) -> Table:
        """Tabulate ``F_exact``. With a ``key`` naming F (a dict of its
        inputs), the grid goes to the disk cache (``cache``, see
        :func:`lnpower.cache.directory`)."""

        def compute():
            u = np.linspace(0.0, math.log1p(rho_max / scale), points)
            rho = scale * np.expm1(u)
            F = np.concatenate(
                [F_exact(rho[i : i + chunk]) for i in range(0, points, chunk)]
            )
            if not (F < 0).all():
                raise ValueError(
                    "F must be negative on the grid (the loss decreases in "
                    "rho)"
                )
            return {"u": u, "logF": np.log(-F)}

        if key is None:
            grid = compute()
        else:
            grid = _cache.arrays(
                "table",
                _cache.code_key(
                    __name__,
                    **key,
                    rho_max=rho_max,
                    points=points,
                    scale=scale,
                    chunk=chunk,
                ),
                compute,
                cache,
            )
        u, logF = grid["u"], grid["logF"]
        rho = scale * np.expm1(u[-2:])
        slope = (logF[-1] - logF[-2]) / math.log(rho[-1] / rho[-2])
        return cls(
            float(u[1] - u[0]), scale, logF.tolist(), float(slope), F_exact
        )

    def __post_init__(self):
        self._last = len(self.logF) - 1
        self._dlog = [b - a for a, b in zip(self.logF, self.logF[1:])]
        self._inv_h, self._inv_scale = 1 / self.h, 1 / self.scale
        self._log_rho_end = math.log(
            self.scale * math.expm1(self._last * self.h)
        )

    def __call__(self, rho: float) -> float:
        """F(rho): log(-F) interpolated linearly in u, a power law
        beyond the grid (the same lookup :meth:`advance` inlines)."""
        u = math.log1p(rho * self._inv_scale) * self._inv_h
        if u < self._last:
            k = int(u)
            return -math.exp(self.logF[k] + self._dlog[k] * (u - k))
        return -math.exp(
            self.logF[-1] + self.slope * (math.log(rho) - self._log_rho_end)
        )

    def advance(self, w: float, v: float, eta: float, m: int, t0: int = 0):
        """``m`` steps of the recursion (see :func:`run`)
        with F looked up inline, about twice as fast as calling the table
        at every step."""
        logF, dlog, last, slope = self.logF, self._dlog, self._last, self.slope
        inv_s, inv_h, log_end, top = (
            self._inv_scale,
            self._inv_h,
            self._log_rho_end,
            logF[-1],
        )
        log1p, exp, log, isfinite = (
            math.log1p,
            math.exp,
            math.log,
            math.isfinite,
        )
        for i in range(m):
            rho = w * v
            u = log1p(rho * inv_s) * inv_h
            if u < last:
                k = int(u)
                f = -eta * exp(logF[k] + dlog[k] * (u - k))
            else:
                f = -eta * exp(top + slope * (log(rho) - log_end))
            if not isfinite(f):
                raise FloatingPointError(
                    f"reduced dynamics diverged at step {t0 + i}"
                )
            w, v = w - v * f, v - w * f
        return w, v

    def max_rel_error(self, probes: int = 60) -> float:
        """Largest relative error of the interpolant at grid midpoints
        (a sample of them)."""
        ks = np.unique(np.linspace(0, len(self.logF) - 2, probes).astype(int))
        rhos = self.scale * np.expm1((ks + 0.5) * self.h)
        approx = np.array([self(r) for r in rhos])
        return float(np.abs(approx / self.exact(rhos) - 1).max())


def ln_layer_table(sample: theory.Sample, **kw) -> Table:
    """F(gamma) = L'(gamma)/d for the LN layer (Theorem 4.3, F_t of
    Appendix C); cached on disk under the sample's data hash."""
    d = sample.task.d
    return Table.build(
        lambda g: theory.ln_layer_dloss(sample, g) / d,
        key=dict(
            model="ln_layer",
            task=sample.task.name,
            d=d,
            n=sample.task.n,
            sample=sample.data_hash,
        ),
        **kw,
    )


def looped_table(
    sample: theory.Sample,
    L: int,
    rho_max: float = 1e4,
    points: int = 1200,
    **kw,
) -> Table:
    """F(rho) = L_L'(rho)/d for the looped model (Theorem 4.1); beyond
    ``rho_max`` the tail follows the power law F ~ -c_L/(d rho^2) fitted at
    the grid's end."""
    d = sample.task.d
    return Table.build(
        lambda r: theory.looped_dloss(sample, r, L) / d,
        rho_max=rho_max,
        points=points,
        key=dict(
            model="looped",
            L=L,
            task=sample.task.name,
            d=d,
            n=sample.task.n,
            sample=sample.data_hash,
        ),
        **kw,
    )
