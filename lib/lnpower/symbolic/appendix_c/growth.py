"""Appendix C.2: gamma diverges (C.2.1) and grows like t^(1/3) (C.2.2): the
symmetric recursions, the sign of F, the gamma^3 increment, the balance Q/(2
gamma) -> 1 and the large-gamma expansion.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..common import F, alpha, beta, d, eta, gamma, is_zero
from .structure import (
    structured_gradients,
)
from .symbols import (
    C1,
    D,
    Q,
    S,
    Upsilon3,
    X,
    a,
    c,
    equal_given_norm,
    h2,
    is_zero_matrix,
    phi,
    psi,
    q,
    s,
    scalar,
    u,
    x,
)


@cache
def symmetric_recursion() -> dict:
    """Appendix C.2.1, step 1 (d = 2 as in :func:`structured_gradients`):
    per sample ``tr(dL/dW12) = beta a^T S g_h`` and
    ``tr(dL/dV21) = alpha a^T S g_h``. By isotropy the population gradient
    of W12 is (tr/d) I, so with F = E[a^T S g_h]/d the update
    W12 -> W12 - eta (tr/d) I is ``alpha' = alpha - eta beta F`` and
    ``beta' = beta - eta alpha F`` (the traces are derived; the update is a
    restatement checked)."""
    g = structured_gradients()
    aSg = (g["S"] * g["a"]).dot(g["g_h"])
    trW, trV = g["W12"].trace(), g["V21"].trace()
    assert equal_given_norm(trW, beta * aSg, g["H"])
    assert equal_given_norm(trV, alpha * aSg, g["H"])
    mean_aSg = d * F  # E[a^T S g_h] = d F defines F
    out = {
        "alpha": alpha - eta * (beta * mean_aSg) / d,
        "beta": beta - eta * (alpha * mean_aSg) / d,
    }
    assert is_zero(out["alpha"] - (alpha - eta * beta * F))
    assert is_zero(out["beta"] - (beta - eta * alpha * F))
    return {**out, "trace_W12": trW, "trace_V21": trV, "aSg": aSg}


@cache
def reduced_loss() -> dict:
    """The per-sample loss under the structure, for symbolic d, from
    h = a + gamma S a, y = h/||h||, the target y_target = Sa/||Sa|| and
    ||a|| = 1 (Appendix C.2.1 step 2, C.3 step 1):
    ``||h||^2 = 1 + 2 gamma q + gamma^2 s^2``,
    ``cos theta = y^T y_target = (q + gamma s^2)/(s ||h||)``,
    ``loss = ||y - y_target||^2 = 2 - 2 cos theta``; with x = gamma s and
    omega = q/s (the Python name ``c``),
    ``cos theta = (omega + x)/sqrt(x^2 + 2x omega + 1)``; and
    ``d loss/d gamma = a^T S g_h``
    ``= -2 s (1 - omega^2)/(x^2 + 2x omega + 1)^(3/2)``.
    """
    h = a + gamma * S * a
    rules = {a.T * a: 1, a.T * S * a: q, a.T * S * S * a: s**2}
    H = scalar(h.T * h, rules)
    hSa = scalar(h.T * S * a, rules)
    SaSa = scalar((S * a).T * (S * a), rules)
    assert is_zero(H - (1 + 2 * gamma * q + gamma**2 * s**2))
    assert is_zero(hSa - (q + gamma * s**2)) and SaSa == s**2
    nh, nt = sp.symbols("N_h N_t", positive=True)  # ||h||, ||S a||
    y, t = h / nh, S * a / nt
    values = {nh: sp.sqrt(H), nt: sp.sqrt(SaSa)}
    loss = scalar((y - t).T * (y - t), rules).subs(values)
    cos = (hSa / (nh * nt)).subs(values)
    assert sp.simplify(loss - (2 - 2 * cos)) == 0
    g_h = 2 / nh * (y - t - h * (h.T * (y - t)) / nh**2)
    aSg = scalar((S * a).T * g_h, rules).subs(values)
    dloss = sp.diff(2 - 2 * cos, gamma)
    assert sp.simplify(aSg - dloss) == 0
    to_xc = {q: c * s, gamma: x / s}
    cos_xc = sp.simplify(cos.subs(to_xc))
    dloss_xc = sp.simplify(dloss.subs(to_xc))
    assert sp.simplify(cos_xc - (c + x) / sp.sqrt(h2)) == 0
    assert (
        sp.simplify(
            dloss_xc / (-2 * s * (1 - c**2) / h2 ** sp.Rational(3, 2)) - 1
        )
        == 0
    )
    return {
        "H": H,
        "hSa": hSa,
        "cos": cos,
        "loss": 2 - 2 * cos,
        "cos_xc": cos_xc,
        "loss_xc": 2 - 2 * cos_xc,
        "dloss": dloss,
        "dloss_xc": dloss_xc,
        "aSg": aSg,
    }


def cauchy_schwarz(k: int = 3) -> dict:
    """Why 0 <= omega <= 1 (Appendix C.2.1, step 2; ``c`` in the code).
    Lagrange's identity for explicit k-vectors e, f: ``||e||^2 ||f||^2 -
    (e^T f)^2 = sum_{i<j} (e_i f_j - e_j f_i)^2`` (with e = a, f = S a:
    s^2 - q^2 >= 0, = 0 only when S a is parallel to a); ``q = a^T S a =
    ||X^T a||^2 >= 0`` (symbolic d, n); ``x^2 + 2x omega + 1 = (x +
    omega)^2 + 1 - omega^2 > 0``."""
    uu = sp.Matrix(sp.symbols(f"e1:{k + 1}", real=True))
    vv = sp.Matrix(sp.symbols(f"f1:{k + 1}", real=True))
    minors = sum(
        (uu[i] * vv[j] - uu[j] * vv[i]) ** 2
        for i in range(k)
        for j in range(i + 1, k)
    )
    gap = uu.dot(uu) * vv.dot(vv) - uu.dot(vv) ** 2
    assert sp.expand(gap - minors) == 0
    assert is_zero_matrix(a.T * S * a - (X.T * a).T * (X.T * a))
    assert sp.expand(h2 - ((x + c) ** 2 + 1 - c**2)) == 0
    return {"gap": gap, "lagrange": minors, "h2": (x + c) ** 2 + 1 - c**2}


def _step() -> tuple[sp.Expr, sp.Expr]:
    """alpha' and beta' as :func:`symmetric_recursion` derives them (without
    re-deriving the gradients, which takes seconds)."""
    return alpha - eta * beta * F, beta - eta * alpha * F


def gamma_increment() -> dict:
    """Appendix C.2.1, step 3: from alpha' = alpha - eta beta F and
    beta' = beta - eta alpha F, ``gamma' - gamma = -eta F Q + eta^2 gamma
    F^2`` (Q = alpha^2 + beta^2), and ``Q - 2 gamma = (alpha - beta)^2``."""
    a1, b1 = _step()
    delta = sp.expand(a1 * b1 - alpha * beta)
    paper = -eta * F * Q + eta**2 * gamma * F**2
    assert is_zero(
        delta - paper.subs({Q: alpha**2 + beta**2, gamma: alpha * beta})
    )
    assert is_zero(alpha**2 + beta**2 - 2 * alpha * beta - (alpha - beta) ** 2)
    return {"delta": paper, "alpha": a1, "beta": b1}


def cube_increment() -> dict:
    """Appendix C.2.2, step 1: ``gamma'^3 - gamma^3 = A + B + C`` with
    ``A = -3 eta gamma^2 F Q``, ``B = 3 eta^2 gamma^3 F^2``,
    ``C = 3 gamma Delta^2 + Delta^3``, Delta = gamma' - gamma."""
    a1, b1 = _step()
    lhs = sp.expand((a1 * b1) ** 3 - (alpha * beta) ** 3)
    Delta = gamma_increment()["delta"]
    terms = {
        "A": -3 * eta * gamma**2 * F * Q,
        "B": 3 * eta**2 * gamma**3 * F**2,
        "C": 3 * gamma * Delta**2 + Delta**3,
    }
    total = sum(terms.values()).subs(
        {Q: alpha**2 + beta**2, gamma: alpha * beta}
    )
    assert is_zero(lhs - total)
    return {"terms": terms, "Delta": Delta}


def balance() -> dict:
    """Appendix C.2.2, step 2(b): ``Q^2 - D^2 = 4 gamma^2`` and, from the
    recursion, ``D' = (1 - eta^2 F^2) D``, ``Q' = (1 + eta^2 F^2) Q -
    4 eta gamma F``. Hence Q/(2 gamma) = sqrt(1 + D^2/(4 gamma^2)) (Q >= 0),
    which tends to 1 as gamma -> oo while ``|D| <= |D_0|`` (squeeze)."""
    a1, b1 = _step()
    sub = {Q: alpha**2 + beta**2, D: beta**2 - alpha**2, gamma: alpha * beta}
    assert is_zero((Q**2 - D**2 - 4 * gamma**2).subs(sub))
    D_next = (1 - eta**2 * F**2) * D
    Q_next = (1 + eta**2 * F**2) * Q - 4 * eta * gamma * F
    assert is_zero(b1**2 - a1**2 - D_next.subs(sub))
    assert is_zero(a1**2 + b1**2 - Q_next.subs(sub))
    g = sp.Symbol("gamma", positive=True)
    ratio = sp.sqrt(4 * g**2 + D**2) / (2 * g)
    assert sp.simplify(ratio - sp.sqrt(1 + D**2 / (4 * g**2))) == 0
    D0 = sp.Symbol("D_0", positive=True)
    upper = sp.sqrt(1 + D0**2 / (4 * g**2))
    assert sp.limit(upper, g, sp.oo) == 1
    return {
        "D_next": D_next,
        "Q_next": Q_next,
        "ratio": sp.sqrt(1 + D**2 / (4 * gamma**2)),
        "upper": upper,
    }


def large_gamma() -> dict:
    """Appendix C.2.2, step 2(c), from :func:`reduced_loss` (the loss built
    from h = a + gamma S a): per sample ``loss = (s^2 - q^2)/(gamma^2 s^4) +
    O(gamma^-3)`` and ``gamma^3 d loss/d gamma -> -2 (s^2 - q^2)/s^4``,
    dominated by its limit: ``|gamma^3 d loss/d gamma| / (2 (1 -
    omega^2)/s^2) = (x^2/(x^2 + 2 x omega + 1))^(3/2) <= 1``. So gamma^3 F
    -> -(2/d) Upsilon3 = -C1 (C1 = 2 Upsilon3/d). With phi = gamma^3 F,
    psi = Q/(2 gamma), u = 1/gamma the terms of :func:`cube_increment` are
    polynomials in (phi, psi, u): ``A = -6 eta phi psi``, B and C vanish at
    u = 0, so at (phi, psi, u) -> (-C1, 1, 0): A -> 6 eta C1, B, C -> 0."""
    red = reduced_loss()
    v, g = sp.symbols("v gamma", positive=True)  # v = 1/gamma
    lead = sp.series(red["loss"].subs(gamma, 1 / v), v, 0, 3).removeO()
    assert is_zero(lead - (s**2 - q**2) * v**2 / s**4)
    dl = red["dloss"].subs(gamma, g)
    dlim = sp.limit(g**3 * dl, g, sp.oo)
    assert is_zero(dlim + 2 * (s**2 - q**2) / s**4)
    bound = -2 * (1 - c**2) / s**2  # the limit, in c = q/s
    ratio = sp.simplify((x / s) ** 3 * red["dloss_xc"] / bound)
    assert sp.simplify(ratio - (x**2 / h2) ** sp.Rational(3, 2)) == 0
    assert sp.expand(h2 - x**2 - (2 * x * c + 1)) == 0  # h2 >= x^2
    terms = cube_increment()["terms"]
    sub = {F: phi * u**3, Q: 2 * psi / u, gamma: 1 / u}
    poly = {k: sp.expand(term.subs(sub)) for k, term in terms.items()}
    assert all(term.is_polynomial(phi, psi, u) for term in poly.values())
    assert is_zero(poly["A"] + 6 * eta * phi * psi)
    assert poly["B"].subs(u, 0) == 0 and poly["C"].subs(u, 0) == 0
    limits = {k: v.subs({phi: -C1, psi: 1, u: 0}) for k, v in poly.items()}
    assert limits == {"A": 6 * eta * C1, "B": 0, "C": 0}
    F_lim = (1 / d) * (-2 * Upsilon3)  # E[gamma^3 dloss] / d
    assert is_zero(F_lim.subs(Upsilon3, C1 * d / 2) + C1)
    return {
        "loss_leading": sp.together(lead.subs(v, 1 / gamma)),
        "dloss_limit": sp.cancel(dlim),
        "domination": ratio,
        "terms": poly,
        "limits": limits,
        "increment_limit": sum(limits.values()),
    }


def ln_large_gamma() -> dict[str, sp.Expr]:
    """Per-sample LN-layer loss for large gamma (Appendix C.2.2), derived
    in :func:`large_gamma`: ``loss_leading = (s^2 - q^2)/(gamma^2 s^4)``
    and the limit ``6 eta C1`` of the gamma^3 increment."""
    out = large_gamma()
    return {
        "loss_leading": out["loss_leading"],
        "increment_limit": out["increment_limit"],
    }
