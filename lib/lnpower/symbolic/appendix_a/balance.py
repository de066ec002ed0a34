"""Appendix A.5: the balance of w and v and the limit of the rho^2
increment."""

from __future__ import annotations

import sympy as sp

from ..appendix_d import rho
from ..common import d, eta, is_zero
from .symbols import v, w

# --- Appendix A.5: the balance of w and v, the rho^2 increment
# --------------------------------


def weight_balance() -> dict[str, sp.Expr]:
    """From ``w' = w - eta v F``, ``v' = v - eta w F``: with Q = w^2 + v^2
    (the paper's S_t), D = v^2 - w^2 and rho = w v, derived ``D' = (1 -
    eta^2 F^2) D``, ``rho' = rho - eta Q F + eta^2 rho F^2`` and ``Q^2 - D^2
    = 4 rho^2``. So Q = sqrt(D^2 + 4 rho^2); while ``eta |F| <= 1``, ``|D|``
    never grows, and for bounded D, ``Q/(2 rho) -> 1`` as rho -> oo, with
    ``Q/(2 rho) = 1 + D^2/(8 rho^2) + O(rho^-4)``. That rho increases
    while F < 0 is read off symbols declared positive: a restatement
    checked."""
    F, Dsym, Qsym = sp.symbols("F D Q", real=True)
    w1, v1 = w - eta * v * F, v - eta * w * F
    Qw, Dw = w**2 + v**2, v**2 - w**2
    D_next = sp.expand(v1**2 - w1**2)
    D_ratio = sp.cancel(D_next / Dw)
    assert is_zero(D_ratio - (1 - eta**2 * F**2))
    rho_next = sp.expand(
        sp.expand(w1 * v1).subs(v**2, Qsym - w**2)
    )  # v^2 = Q - w^2
    assert is_zero(rho_next - (w * v - eta * Qsym * F + eta**2 * w * v * F**2))
    identity = sp.factor(sp.expand(Qw**2 - Dw**2))
    assert is_zero(identity - 4 * (w * v) ** 2)
    ratio = sp.sqrt(Dsym**2 + 4 * rho**2) / (2 * rho)
    lim = sp.limit(ratio, rho, sp.oo)
    nxt = sp.series(ratio, rho, sp.oo, 4).removeO()
    assert lim == 1 and is_zero(nxt - 1 - Dsym**2 / (8 * rho**2))
    f, Qp = sp.symbols(
        "f Q", positive=True
    )  # F = -f < 0 (the loss decreases in rho)
    step = sp.factor(-eta * Qp * (-f) + eta**2 * rho * f**2)
    assert step.subs(eta, sp.Symbol("eta_", positive=True)).is_positive
    return {
        "D_next": D_next,
        "D_ratio": D_ratio,
        "rho_next": rho_next,
        "Q2_minus_D2": identity,
        "limit": lim,
        "expansion": nxt + sp.O(rho**-4, (rho, sp.oo)),
        "step_if_F_negative": step,
    }


def looped_increment() -> sp.Expr:
    """Theorem 4.1's rate (Appendix A.5). With ``L_L = L_inf + c_L/rho +
    e/rho^2 + ...`` (e stands for the next order), ``F = L_L'/d =
    -(c_L/rho^2 + 2 e/rho^3)/d``; with ``rho' = rho - eta Q F + eta^2 rho
    F^2`` and ``Q = sqrt(D^2 + 4 rho^2)`` (D = v^2 - w^2 bounded,
    :func:`weight_balance`), ``rho'^2 - rho^2 -> 4 eta c_L / d`` as
    rho -> oo, whatever D and e. Returns the limit."""
    c, e = sp.symbols("c_L e", positive=True)
    Dsym = sp.Symbol("D", real=True)
    Lrho = c / rho + e / rho**2
    Fr = sp.diff(Lrho, rho) / d
    Q = sp.sqrt(Dsym**2 + 4 * rho**2)
    r_next = rho - eta * Q * Fr + eta**2 * rho * Fr**2
    lim = sp.limit(sp.expand(r_next**2 - rho**2), rho, sp.oo)
    assert is_zero(lim - 4 * eta * c / d)
    return lim
