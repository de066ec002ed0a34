"""The chapter looped_power_method (Theorem 4.1, Appendix A): the looped
model's reduced population dynamics, its growth rates, the rho^2 increment
and the limit of its loss."""

from __future__ import annotations

from .. import dynamics, theory
from ..claims.status import verdict, within
from ..config import PAPER
from .population import looped_run, sample


def looped_loss_limit():
    _, (t, w, v) = looped_run()
    sm = sample("sphere", 20_000, 2)
    l_inf = theory.power_method_loss(sm, 10).value
    l_end = float(theory.looped_loss(sm, w[-1] * v[-1], 10))
    gap = l_end / l_inf - 1
    return (
        round(gap, 5),
        verdict(0 <= gap < 0.01 and l_inf > 0),
        f"L_10(rho_(10^6)) = {l_end:.4f}, L_10^(inf) = {l_inf:.4f}",
    )


def looped_rho_increment():
    tab, (t, w, v) = looped_run()
    c_L = theory.c_L(sample("sphere", 5_000, 1), 10).value
    ratio = dynamics.power_increment(tab, w[-1], v[-1], PAPER.lr, 2) / (
        4 * PAPER.lr * c_L / PAPER.d
    )
    return round(ratio, 4), within(ratio, 1.0, 0.02), f"c_L = {c_L:.4f}"


def looped_growth_exponents():
    _, (t, w, v) = looped_run()
    pw = dynamics.exponent(t, w, 1e5, 1e6)[0]
    pr = dynamics.exponent(t, w * v, 1e5, 1e6)[0]
    ok = abs(pw - 0.25) < 0.01 and abs(pr - 0.5) < 0.01
    return round(pw, 4), verdict(ok), f"w: {pw:.4f}, rho: {pr:.4f}"
