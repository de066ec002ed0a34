"""F = L'/d of the LN layer and of the looped model, tabulated once on a grid
uniform in ``u = log(1 + rho)`` (``log(-F)`` interpolated linearly, so power
laws are followed exactly in the tail) so that 10^6 steps of the reduced
dynamics (:mod:`lnpower.dynamics`) take seconds; :meth:`Table.max_rel_error`
bounds the interpolation error against direct evaluation."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import cache as _cache
from . import theory


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
        """Tabulate ``F_exact``. With a ``key`` naming F (JSON data), the
        grid goes to the disk cache (``cache``, see
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

        grid = (
            compute()
            if key is None
            else _cache.arrays(
                "table",
                [key, rho_max, points, scale, chunk],
                ("tables", "theory", "landscape", "montecarlo"),
                compute,
                cache,
            )
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
        """``m`` steps of the recursion (see :func:`lnpower.dynamics.run`)
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
    Appendix C); cached on disk under the sample's fingerprint."""
    d = sample.task.d
    return Table.build(
        lambda g: theory.ln_layer_dloss(sample, g) / d,
        key=["ln_layer", repr(sample.task), sample.fingerprint],
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
        key=["looped", L, repr(sample.task), sample.fingerprint],
        **kw,
    )
