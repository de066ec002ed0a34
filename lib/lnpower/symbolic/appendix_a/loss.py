"""Appendix A: the loss in the eigenbasis, the scalar recursion, monotonicity
and the limit of the loss and its 1/rho coefficient."""

from __future__ import annotations

import sympy as sp

from ..appendix_d import LAMBDAS, C, Lsym, eigen_loss_terms, rho
from ..common import d, eta, is_zero
from .symbols import v, w

# --- Appendix A: the loss in the eigenbasis and the scalar recursion
# ------------------------


def eigen_loss(L: int = 2) -> dict[str, sp.Expr]:
    """Dist^2 of y = (I + rho S)^L a/||.|| to V = span(v_1) (r = 1), from
    the definition ``||y - Proj y||^2`` in the symbolic eigenbasis of
    :mod:`lnpower.symbolic.eigenbasis` (d = 3, symbolic lambda_i and c_i;
    exact polynomial arithmetic): numerator and denominator are asserted
    equal to ``sum_{i>1} c_i^2 mu_i^{2L}`` and ``sum_i c_i^2 mu_i^{2L}``,
    mu_i = 1 + rho lambda_i. Also the symbolic-L statement on the diagonal
    form."""
    num, den = eigen_loss_terms(L, rho, 1)
    mu = [1 + rho * lam for lam in LAMBDAS]

    def expansion(power):
        return sum(C[i] ** 2 * mu[i] ** (2 * power) for i in (1, 2)) / sum(
            C[i] ** 2 * mu[i] ** (2 * power) for i in range(3)
        )

    assert is_zero(num / den - expansion(L))
    # symbolic L: y is proportional to (I + rho Lambda)^L c in the eigenbasis
    uL = (sp.eye(3) + rho * sp.diag(*LAMBDAS)) ** Lsym * C
    Pd = sp.diag(1, 0, 0)
    general = ((uL - Pd * uL).dot(uL - Pd * uL)) / uL.dot(uL)
    assert sp.simplify(sp.powsimp(general - expansion(Lsym), force=True)) == 0
    collected = sp.collect(
        sp.expand(num), [C[i] ** 2 for i in range(3)], evaluate=False
    )
    num_collected = sp.Add(
        *(k * sp.factor(val) for k, val in collected.items())
    )
    assert is_zero(num_collected - num)
    return {
        "numerator": num,
        "denominator": den,
        "general": expansion(Lsym),
        "numerator_collected": num_collected,
    }


def scalar_recursion() -> dict[str, sp.Expr]:
    """Under the structure the loss is a function of rho = w v only, L_L(w
    v). Chain rule: ``d/dw L_L(w v) = v L_L'(w v)``; since the W12 gradient
    is g I (isotropy) and ``d/dw = tr(gradient) = d g``, ``g = v L_L'/d``,
    and gradient descent reads ``w' = w - eta v F``, ``v' = v - eta w F``
    with ``F = L_L'(rho)/d`` (g is derived by ``solve``; the update is
    written in, a restatement)."""
    Lf = sp.Function("mathcal{L}_L")
    g_sym = sp.Symbol("g", real=True)
    dw, dv = sp.diff(Lf(w * v), w), sp.diff(Lf(w * v), v)
    (g,) = sp.solve(sp.Eq(d * g_sym, dw), g_sym)
    (h,) = sp.solve(sp.Eq(d * g_sym, dv), g_sym)
    F = sp.Symbol("F", real=True)
    Fdef = sp.Subs(sp.Derivative(Lf(rho), rho), rho, w * v).doit() / d
    assert is_zero(g - v * Fdef) and is_zero(h - w * Fdef)
    Lprime = sp.Symbol(
        r"\mathcal{L}_L'(\rho)"
    )  # for display: L_L' at rho = w v

    def shown(e):
        return e.replace(lambda x: isinstance(x, sp.Subs), lambda x: Lprime)

    return {
        "dL/dw": shown(dw),
        "g_W12": shown(g),
        "g_V21": shown(h),
        "w_next": w - eta * v * F,
        "v_next": v - eta * w * F,
    }


def _per_sample_dist2(L=Lsym):
    """sum_{i>1} c_i^2 t_i^{2L}/(c_1^2 + sum_{i>1} c_i^2 t_i^{2L}), t_i =
    mu_i/mu_1: the eigen-expansion divided through by mu_1^{2L} (d = 3, r =
    1)."""
    mu = [1 + rho * lam for lam in LAMBDAS]
    t = [sp.cancel(mu[i] / mu[0]) for i in range(3)]
    wts = [C[i] ** 2 * t[i] ** (2 * L) for i in range(3)]
    return (wts[1] + wts[2]) / sum(wts), t


def monotone() -> dict[str, sp.Expr]:
    """Appendix A (convergence): the per-sample loss decreases in rho (d =
    3, r = 1, symbolic L). With zeta_i = mu_i/mu_1 (derived: ``dzeta_i/drho
    = -(lambda_1 - lambda_i)/mu_1^2``) the expansion is ``num/(c_1^2 +
    num)``, num = sum_{i>1} c_i^2 zeta_i^{2L}, and by the chain rule
    ``dDist^2/drho = -(2 L c_1^2/(mu_1^2 (c_1^2 + num)^2)) sum_{i>1} c_i^2
    zeta_i^{2L-1} (lambda_1 - lambda_i)`` (asserted equal to SymPy's
    derivative): every factor is >= 0 when lambda_1 >= lambda_i, so the loss
    is non-increasing in rho. (zeta and num, not the book's t and N, which
    are a training step and a training-set size.)"""
    _, t = _per_sample_dist2()
    mu1 = 1 + rho * LAMBDAS[0]
    dt = {i: sp.factor(sp.diff(t[i], rho)) for i in (1, 2)}
    for i, expr in dt.items():
        assert is_zero(expr + (LAMBDAS[0] - LAMBDAS[i]) / mu1**2)
    T = {i: sp.Function(f"zeta{i + 1}")(rho) for i in (1, 2)}
    ts = {i: sp.Symbol(f"zeta{i + 1}", positive=True) for i in (1, 2)}
    num = sum(C[i] ** 2 * T[i] ** (2 * Lsym) for i in (1, 2))
    derivative = sp.diff(num / (C[0] ** 2 + num), rho)
    derivative = derivative.subs(
        {sp.Derivative(T[i], rho): dt[i] for i in (1, 2)}
    )
    derivative = derivative.subs({T[i]: ts[i] for i in (1, 2)})
    Ns = num.subs({T[i]: ts[i] for i in (1, 2)})
    claimed = -(2 * Lsym * C[0] ** 2 / (mu1**2 * (C[0] ** 2 + Ns) ** 2)) * sum(
        C[i] ** 2 * ts[i] ** (2 * Lsym - 1) * (LAMBDAS[0] - LAMBDAS[i])
        for i in (1, 2)
    )
    assert sp.simplify(derivative - claimed) == 0
    return {"dt": [dt[1], dt[2]], "derivative": claimed}


def large_rho() -> dict[str, sp.Expr]:
    """Appendix A.5: the per-sample Dist^2 for large rho (d = 3, r = 1,
    symbolic L): series in xi = 1/rho. The power method's error is derived
    from its definition in the eigenbasis, ``Dist^2(b/||b||, V) = 1 -
    b_1^2/||b||^2`` for the power iterate ``b = S^L a``, ``S =
    diag(lambda)``: it is ``sum_{i>1} p~_i/Pi``, and both the constant
    term and the limit rho -> oo equal it; the coefficient of 1/rho is
    asserted equal to the integrand of ``theory.c_L``: ``(2L/lambda_1)
    Pi_top sum_{i>1} p~_i (lambda_1/lambda_i - 1)/Pi^2``, ``p~_i = c_i^2
    (lambda_i/lambda_1)^{2L}``, Pi = sum p~_i, Pi_top = p~_1."""
    x = sp.Symbol("x", positive=True)
    dist2, _ = _per_sample_dist2()
    f = dist2.subs(rho, 1 / x).replace(
        lambda e: e.is_Pow and e.exp == 2 * Lsym,
        lambda e: sp.cancel(e.base) ** e.exp,
    )
    ser = sp.series(f, x, 0, 2).removeO()
    const, coef = ser.coeff(x, 0), ser.coeff(x, 1)
    lam1 = LAMBDAS[0]
    p = [C[i] ** 2 * (LAMBDAS[i] / lam1) ** (2 * Lsym) for i in range(3)]
    P = sum(p)
    y = (
        sp.diag(*LAMBDAS) ** Lsym * C
    )  # L power iterations from a, in the eigenbasis
    power_method = 1 - y[0] ** 2 / (y.T * y)[0]
    assert sp.simplify(power_method - (p[1] + p[2]) / P) == 0
    library = (
        2
        * Lsym
        / lam1
        * p[0]
        * sum(p[i] * (lam1 / LAMBDAS[i] - 1) for i in (1, 2))
        / P**2
    )
    lim = sp.limit(dist2, rho, sp.oo)
    assert sp.simplify(const - power_method) == 0
    assert sp.simplify(lim - power_method) == 0
    assert sp.simplify(coef - library) == 0
    # the same coefficient, regrouped for display: factor, then collect by
    # c_2^2, c_3^2
    num, den = sp.fraction(sp.factor(sp.powsimp(coef, force=True)))
    lead = 2 * Lsym * C[0] ** 2 * lam1 ** (2 * Lsym)
    inner = sp.collect(
        sp.expand(sp.cancel(num / lead)),
        [C[1] ** 2, C[2] ** 2],
        evaluate=False,
    )
    rest = sp.factor(sp.cancel(den / (LAMBDAS[0] * LAMBDAS[1] * LAMBDAS[2])))
    display = (
        lead
        * sp.Add(
            *(
                k * sp.factor(val / (LAMBDAS[0] * LAMBDAS[1] * LAMBDAS[2]))
                for k, val in inner.items()
            )
        )
        / rest
    )
    assert sp.simplify(display - coef) == 0
    return {
        "limit": lim,
        "constant": const,
        "c_L": coef,
        "c_L_display": display,
        "power_method": power_method,
        "library": library,
    }
