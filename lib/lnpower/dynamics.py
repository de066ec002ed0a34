"""The exact reduced (scalar) population dynamics of Theorems 4.1, 4.2 and 4.3.

Under the structure (4.2) matrix gradient descent on (W, V) is exactly ``w' = w
- eta v F(w v)``, ``v' = v - eta w F(w v)`` with ``F = L'/d``: the gradient
with respect to W12 = w I is ``(L'(wv)/d) v I`` (Appendices A, B.1 and C.2.1,
step 1). For the LN layer and the looped model F is tabulated once
(:mod:`lnpower.tables`), so that 10^6 steps take seconds."""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from . import cache as _cache
from .config import ADAM
from .tables import Table, ln_layer_table, looped_table  # noqa: F401


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
    w, v)``. A run on a :class:`~lnpower.tables.Table` with a ``record``
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
        table = [_cache.fingerprint(F.logF), F.h, F.scale, F.slope]
        out = _cache.arrays(
            "run",
            [table, float(w0), float(v0), eta, steps, rec],
            ("dynamics", "tables"),
            compute,
            cache,
        )
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
