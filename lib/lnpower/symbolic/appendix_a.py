"""Appendices A and F: the looped model (Theorem 4.1).

Schur's lemma for O(d) (Lemma F.1), the zero blocks' vanishing gradient, the
loss in the eigenbasis and the scalar recursion, monotonicity and the limit
of the loss, its 1/rho coefficient c_L, the balance of w and v, and the
limit of the rho^2 increment (Appendix A.5). The eigenbasis is that of
:mod:`lnpower.symbolic.eigenbasis` (``C``, ``LAMBDAS``, ``rho``, ``Lsym``
are read from it), and the loss in it is Appendix D's
:func:`~lnpower.symbolic.appendix_d.eigen_loss_terms`.
"""

from __future__ import annotations

import sympy as sp

from .appendix_d import eigen_loss_terms
from .common import WEIGHT_BLOCKS, check, d, eta, is_zero
from .eigenbasis import LAMBDAS, C, Lsym, rho

# --- A: the symbols w (W12 = w I) and v (V21 = v I)

w, v = sp.symbols("w v", real=True)


# --- F, Lemma F.1: Schur's lemma for O(d)


def sign_and_cycle(dim: int = 3) -> list[sp.Matrix]:
    """Orthogonal matrices used in the proof of Lemma F.1: the sign flips
    diag(1, .., -1, .., 1) and the cyclic permutation e_i -> e_{i+1}."""
    gens = []
    for k in range(dim):
        flip = sp.eye(dim)
        flip[k, k] = -1
        gens.append(flip)
    cycle = sp.zeros(dim, dim)
    for i in range(dim):
        cycle[(i + 1) % dim, i] = 1
    gens.append(cycle)
    for k, O in enumerate(gens):
        check(
            O.T * O == sp.eye(dim),
            f"Lemma F.1: generator {k + 1} of {len(gens)} is orthogonal",
        )
    return gens


def commutant(generators: list[sp.Matrix]) -> sp.Matrix:
    """The general matrix J with ``J O = O J`` for every O in
    ``generators``: a symbolic J (entries j11, j12, ...) with the linear
    equations solved (the free entries stay symbols)."""
    dim = generators[0].shape[0]
    J = sp.Matrix(dim, dim, lambda i, j: sp.Symbol(f"j{i + 1}{j + 1}"))
    eqs = [e for O in generators for e in (J * O - O * J)]
    (sol,) = sp.solve(eqs, list(J), dict=True)
    return J.subs(sol)


def schur_lemma(dim: int = 3) -> sp.Matrix:
    """Lemma F.1: a matrix that commutes with every orthogonal matrix is c
    I. Already the sign flips and the cyclic permutation force it (checked:
    one free symbol times I)."""
    J = commutant(sign_and_cycle(dim))
    c = J[0, 0]
    check(
        c.is_Symbol and J == c * sp.eye(dim),
        "Lemma F.1: the commutant is c I (one free symbol)",
    )
    return J


# --- A.3: the zero blocks' gradient vanishes


def _ln(Z: sp.Matrix) -> sp.Matrix:
    return sp.Matrix.hstack(
        *[
            Z[:, j] / sp.sqrt(sum(e**2 for e in Z[:, j]))
            for j in range(Z.shape[1])
        ]
    )


def zero_block_derivatives(
    L: int = 1, dim: int = 2, cols: int = 2
) -> dict[str, sp.Matrix]:
    """Appendix A.3: the derivative of the looped model's output y_L (L
    loops of the LN layer) along a perturbation ``eps B`` of one block at
    the structured point W12 = w I, V21 = v I (all else 0), at eps = 0, for
    symbolic X, a, w, v and a symbolic direction B. Checks it is
    identically 0 for the six blocks that start at zero (so the gradient of
    any loss of y_L vanishes there) and not for W12 and V21. Returns
    ``{block: dy_L/deps}``."""
    eps = sp.Symbol("epsilon", real=True)
    X = sp.Matrix(
        dim, cols, lambda i, j: sp.Symbol(f"x{i + 1}{j + 1}", real=True)
    )
    a = sp.Matrix(dim, 1, lambda i, j: sp.Symbol(f"a{i + 1}", real=True))
    B = sp.Matrix(
        dim, dim, lambda i, j: sp.Symbol(f"b{i + 1}{j + 1}", real=True)
    )
    Z = sp.zeros
    E0 = sp.BlockMatrix([[X, Z(dim, 1)], [Z(dim, cols), a]]).as_explicit()
    out = {}
    for name in WEIGHT_BLOCKS:
        blocks = {"W": {"12": w * sp.eye(dim)}, "V": {"21": v * sp.eye(dim)}}
        blocks[name[0]][name[1:]] = (
            blocks[name[0]].get(name[1:], Z(dim, dim)) + eps * B
        )

        def full(m):
            return sp.BlockMatrix(
                [
                    [m.get("11", Z(dim, dim)), m.get("12", Z(dim, dim))],
                    [m.get("21", Z(dim, dim)), m.get("22", Z(dim, dim))],
                ]
            ).as_explicit()

        W, V = full(blocks["W"]), full(blocks["V"])
        E = E0
        for _ in range(L):
            E = _ln(E + V * E * E.T * W * E)
        dy = E[dim:, cols].diff(eps).subs(eps, 0)
        if name in (
            "W12",
            "V21",
        ):  # not identically 0: a rational point where it is not
            point = {
                s: sp.Rational(k + 2, k + 3)
                for k, s in enumerate(sorted(dy.free_symbols, key=str))
            }
            check(
                max(abs(e) for e in dy.xreplace(point).evalf(30)) > 1e-6,
                f"Appendix A.3: dy_L/deps along {name} is not identically 0",
            )
            out[name] = dy
        else:
            out[name] = dy.applyfunc(lambda e: sp.cancel(sp.together(e)))
            check(
                out[name] == Z(dim, 1),
                f"Appendix A.3: dy_L/deps along {name} vanishes",
            )
    return out


# --- A: the loss in the eigenbasis, the scalar recursion, its limit


def eigen_loss(L: int = 2) -> dict[str, sp.Expr]:
    """Dist^2 of y = (I + rho S)^L a/||.|| to V = span(v_1) (r = 1), from
    the definition ``||y - Proj y||^2`` in the symbolic eigenbasis of
    :mod:`lnpower.symbolic.eigenbasis` (d = 3, symbolic lambda_i and c_i;
    exact polynomial arithmetic): numerator and denominator are checked
    equal to ``sum_{i>1} c_i^2 mu_i^{2L}`` and ``sum_i c_i^2 mu_i^{2L}``,
    mu_i = 1 + rho lambda_i. Also the symbolic-L statement on the diagonal
    form."""
    num, den = eigen_loss_terms(L, rho, 1)
    mu = [1 + rho * lam for lam in LAMBDAS]

    def expansion(power):
        return sum(C[i] ** 2 * mu[i] ** (2 * power) for i in (1, 2)) / sum(
            C[i] ** 2 * mu[i] ** (2 * power) for i in range(3)
        )

    check(
        is_zero(num / den - expansion(L)),
        f"Appendix A: the eigen-expansion of Dist^2 (L = {L})",
    )
    # symbolic L: y is proportional to (I + rho Lambda)^L c in the eigenbasis
    uL = (sp.eye(3) + rho * sp.diag(*LAMBDAS)) ** Lsym * C
    Pd = sp.diag(1, 0, 0)
    general = ((uL - Pd * uL).dot(uL - Pd * uL)) / uL.dot(uL)
    check(
        sp.simplify(sp.powsimp(general - expansion(Lsym), force=True)) == 0,
        "Appendix A: the eigen-expansion of Dist^2 (symbolic L)",
    )
    collected = sp.collect(
        sp.expand(num), [C[i] ** 2 for i in range(3)], evaluate=False
    )
    num_collected = sp.Add(
        *(k * sp.factor(val) for k, val in collected.items())
    )
    check(
        is_zero(num_collected - num),
        "Appendix A: the numerator collected by c_i^2",
    )
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
    check(
        is_zero(g - v * Fdef) and is_zero(h - w * Fdef),
        "Appendix A: g = v L_L'/d and h = w L_L'/d (chain rule)",
    )
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
    zeta_i^{2L-1} (lambda_1 - lambda_i)`` (checked equal to SymPy's
    derivative): every factor is >= 0 when lambda_1 >= lambda_i, so the loss
    is non-increasing in rho. (zeta and num, not the book's t and N, which
    are a training step and a training-set size.)"""
    _, t = _per_sample_dist2()
    mu1 = 1 + rho * LAMBDAS[0]
    dt = {i: sp.factor(sp.diff(t[i], rho)) for i in (1, 2)}
    for i, expr in dt.items():
        check(
            is_zero(expr + (LAMBDAS[0] - LAMBDAS[i]) / mu1**2),
            f"Appendix A: the derivative of zeta_{i + 1} = mu_{i + 1}/mu_1",
        )
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
    check(
        sp.simplify(derivative - claimed) == 0,
        "Appendix A: dDist^2/drho is the paper's expression (<= 0)",
    )
    return {"dt": [dt[1], dt[2]], "derivative": claimed}


def large_rho() -> dict[str, sp.Expr]:
    """Appendix A.5: the per-sample Dist^2 for large rho (d = 3, r = 1,
    symbolic L): series in xi = 1/rho. The power method's error is derived
    from its definition in the eigenbasis, ``Dist^2(b/||b||, V) = 1 -
    b_1^2/||b||^2`` for the power iterate ``b = S^L a``, ``S =
    diag(lambda)``: it is ``sum_{i>1} p~_i/Pi``, and both the constant
    term and the limit rho -> oo equal it; the coefficient of 1/rho is
    checked equal to the integrand of ``theory.c_L``: ``(2L/lambda_1)
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
    check(
        sp.simplify(power_method - (p[1] + p[2]) / P) == 0,
        "Appendix A.5: the power method's error is sum_{i>1} p~_i/Pi",
    )
    library = (
        2
        * Lsym
        / lam1
        * p[0]
        * sum(p[i] * (lam1 / LAMBDAS[i] - 1) for i in (1, 2))
        / P**2
    )
    lim = sp.limit(dist2, rho, sp.oo)
    check(
        sp.simplify(const - power_method) == 0,
        "Appendix A.5: the constant term is the power method's error",
    )
    check(
        sp.simplify(lim - power_method) == 0,
        "Appendix A.5: Dist^2 -> the power method's error as rho -> oo",
    )
    check(
        sp.simplify(coef - library) == 0,
        "Appendix A.5: the 1/rho coefficient is theory.c_L's integrand",
    )
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
    check(
        sp.simplify(display - coef) == 0,
        "Appendix A.5: c_L regrouped for display is c_L",
    )
    return {
        "limit": lim,
        "constant": const,
        "c_L": coef,
        "c_L_display": display,
        "power_method": power_method,
        "library": library,
    }


# --- A.5: the balance of w and v and the limit of the rho^2 increment


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
    check(
        is_zero(D_ratio - (1 - eta**2 * F**2)),
        "Appendix A.5: D' = (1 - eta^2 F^2) D",
    )
    rho_next = sp.expand(
        sp.expand(w1 * v1).subs(v**2, Qsym - w**2)
    )  # v^2 = Q - w^2
    check(
        is_zero(rho_next - (w * v - eta * Qsym * F + eta**2 * w * v * F**2)),
        "Appendix A.5: rho' = rho - eta Q F + eta^2 rho F^2",
    )
    identity = sp.factor(sp.expand(Qw**2 - Dw**2))
    check(
        is_zero(identity - 4 * (w * v) ** 2),
        "Appendix A.5: Q^2 - D^2 = 4 rho^2",
    )
    ratio = sp.sqrt(Dsym**2 + 4 * rho**2) / (2 * rho)
    lim = sp.limit(ratio, rho, sp.oo)
    nxt = sp.series(ratio, rho, sp.oo, 4).removeO()
    check(
        lim == 1 and is_zero(nxt - 1 - Dsym**2 / (8 * rho**2)),
        "Appendix A.5: Q/(2 rho) = 1 + D^2/(8 rho^2) + O(rho^-4) -> 1",
    )
    f, Qp = sp.symbols(
        "f Q", positive=True
    )  # F = -f < 0 (the loss decreases in rho)
    step = sp.factor(-eta * Qp * (-f) + eta**2 * rho * f**2)
    check(
        step.subs(eta, sp.Symbol("eta_", positive=True)).is_positive,
        "Appendix A.5: rho increases while F < 0",
    )
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
    check(
        is_zero(lim - 4 * eta * c / d),
        "Theorem 4.1 (Appendix A.5): rho'^2 - rho^2 -> 4 eta c_L/d",
    )
    return lim
