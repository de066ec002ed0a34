"""Appendix C: the layer with LN (Theorem 4.3). The large-gamma expansion of the loss and the
limit of the gamma^3 increment."""

from __future__ import annotations

import sympy as sp

from .common import d, eta, gamma, is_zero


def ln_large_gamma() -> dict[str, sp.Expr]:
    """Per-sample LN-layer loss for large gamma (Appendix C.2.2). With s = ||Sa||, q = a^T S a,
    ``loss = 2 - 2 (q/s + gamma s)/sqrt(1 + 2 gamma q + gamma^2 s^2) = (s^2 - q^2)/(gamma^2 s^4)
    + O(gamma^-3)``, so E[loss] ~ Upsilon3/gamma^2, F = L'/d ~ -C1/gamma^3 with C1 = 2 Upsilon3/d,
    and the gamma^3 increment tends to 6 eta C1 (alpha = beta, so S = 2 gamma)."""
    s, q, x = sp.symbols("s q x", positive=True)  # x = 1/gamma
    g = 1 / x
    loss = 2 - 2 * (q / s + g * s) / sp.sqrt(1 + 2 * g * q + g**2 * s**2)
    lead = sp.series(loss, x, 0, 3).removeO()
    assert is_zero(lead - (s**2 - q**2) * x**2 / s**4)
    Y3, C1 = sp.symbols("Upsilon3 C1", positive=True)
    dL = sp.diff(Y3 / gamma**2, gamma)
    assert is_zero(dL / d + 2 * Y3 / (d * gamma**3))
    Fa = -C1 / gamma**3
    g_next = gamma - eta * (2 * gamma) * Fa + eta**2 * gamma * Fa**2
    inc = sp.series(g_next**3 - gamma**3, gamma, sp.oo, 2).removeO()
    assert is_zero(sp.limit(inc, gamma, sp.oo) - 6 * eta * C1)
    return {"loss_leading": lead.subs(x, 1 / gamma), "increment_limit": 6 * eta * C1}
