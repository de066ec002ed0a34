"""Appendix C: the layer with LN (Theorem 4.3), derived with SymPy.

Every function builds its objects from the definitions (the layer (4.5),
the per-sample loss, the gradient-descent recursion), derives what the
appendix states and checks it against the paper's formula (a
:class:`~lnpower.symbolic.common.DerivationFailed` if one fails; ``python
-O`` does not remove these checks). The chapter ``proof_with_ln`` shows them
step by step.

- C.1.1: :func:`output_lemma` (y = h/||z||), :func:`structured_gradients`
- C.1.2: :func:`induction` (base case, inductive step), :func:`schur`
- C.2.1: :func:`symmetric_recursion`, :func:`reduced_loss`,
  :func:`cauchy_schwarz`, :func:`gamma_increment`
- C.2.2: :func:`cube_increment`, :func:`balance`, :func:`large_gamma`
  (:func:`ln_large_gamma` keeps the older two-key summary)
- C.3: :func:`unit_distance`, :func:`loss_bound`, :func:`iterations`

Notation: S = X X^T; s = ||S a||, q = a^T S a, omega = q/s (``c`` in
the code), x = gamma s;
Q = alpha^2 + beta^2 (the paper's S_t), D = beta^2 - alpha^2."""

from __future__ import annotations

from functools import cache

import sympy as sp

from ..model import BLOCKS
from .appendix_a import commutant, sign_and_cycle
from .common import F, alpha, beta, check, d, eta, gamma, is_zero

# --- C: the symbols, and the helpers for matrix expressions

dim, cols = sp.symbols("d n", integer=True, positive=True)  # shapes only
X = sp.MatrixSymbol("X", dim, cols)
a = sp.MatrixSymbol("a", dim, 1)
S = X * X.T
W = {k: sp.MatrixSymbol(f"W_{{{k}}}", dim, dim) for k in BLOCKS}
V = {k: sp.MatrixSymbol(f"V_{{{k}}}", dim, dim) for k in BLOCKS}
s, q = sp.symbols("s q", positive=True)
c, x = sp.symbols(
    "omega x", nonnegative=True
)  # c: the cosine q/s, shown as omega
Q, D = sp.symbols("Q D", real=True)
beta0 = sp.Symbol("beta_0", positive=True)
# gamma^3 F, Q/(2 gamma) and 1/gamma in the limit of the gamma^3 increment
phi, psi, u = sp.symbols(
    "Phi Psi u", real=True
)  # shown as capitals: phi, psi name angles
Upsilon3, C1 = sp.symbols("Upsilon3 C1", positive=True)
h2 = x**2 + 2 * x * c + 1  # ||h||^2 in the reduced variables x, c


def is_zero_matrix(M) -> bool:
    """True when a matrix expression (or explicit matrix) expands to zero."""
    M = sp.expand(M)
    if isinstance(M, sp.MatrixBase):
        return M.applyfunc(sp.expand) == sp.zeros(*M.shape)
    return M == 0 or bool(getattr(M, "is_ZeroMatrix", False))


def scalar(expr, rules: dict) -> sp.Expr:
    """A 1 x 1 matrix expression as a scalar, with the 1 x 1 products named
    in ``rules`` replaced by scalars; checks that none is left over."""
    one = sp.Identity(1)
    out = sp.expand(expr).subs({k: v * one for k, v in rules.items()})
    out = sp.expand(sp.Matrix(out.as_explicit())[0, 0])
    check(
        not any(isinstance(f, sp.MatrixSymbol) for f in out.free_symbols),
        "Appendix C: every 1 x 1 product is replaced by a scalar",
    )
    return out


def equal_given_norm(lhs, rhs, H) -> bool:
    """``lhs == rhs`` for expressions in sqrt(H) (H a polynomial): write
    every power H^e (e rational) as chi^(2e) with chi^2 = H, clear
    denominators and reduce the numerator modulo chi^2 - H."""
    chi = sp.Dummy("chi", positive=True)
    H = sp.expand(H)

    def power_of_H(z):
        return z.is_Pow and z.exp.is_Rational and sp.expand(z.base - H) == 0

    diff = (lhs - rhs).replace(power_of_H, lambda z: chi ** (2 * z.exp))
    num = sp.numer(sp.together(diff))
    return sp.rem(sp.expand(num), chi**2 - H, chi) == 0


# --- C.1: the output of the LN layer, its gradients, the structure


@cache
def block_layer():
    """E + V E E^T W E of (4.5) in d x d blocks, for symbolic d and n, with
    E = [[X, 0], [0, a]]: the 2 x 2 grid of blocks (rows: top, bottom half;
    block columns: the n tokens of X, the query token)."""
    E = sp.BlockMatrix(
        [[X, sp.ZeroMatrix(dim, 1)], [sp.ZeroMatrix(dim, cols), a]]
    )
    Wm = sp.BlockMatrix([[W["11"], W["12"]], [W["21"], W["22"]]])
    Vm = sp.BlockMatrix([[V["11"], V["12"]], [V["21"], V["22"]]])
    gram = sp.block_collapse(E * E.T)
    G = gram.blocks
    check(
        is_zero_matrix(G[0, 0] - S) and is_zero_matrix(G[1, 1] - a * a.T),
        "Appendix C.1: the diagonal blocks of E E^T are S and a a^T",
    )
    check(
        is_zero_matrix(G[0, 1]) and is_zero_matrix(G[1, 0]),
        "Appendix C.1: the off-diagonal blocks of E E^T are 0",
    )
    return sp.block_collapse(E + Vm * E * E.T * Wm * E)


def output_lemma() -> dict:
    """The lemma of Appendix C.1.1. The last column z of E + V E E^T W E is
    [p; h] with ``p = V11 S W12 a + V12 a a^T W22 a`` and
    ``h = a + V21 S W12 a + V22 a a^T W22 a`` (symbolic d, n); W11 and W21
    do not enter. LN divides z by ||z||, so y = h/||z|| with
    ||z||^2 = ||p||^2 + ||h||^2. The same on explicit d = n = 2 matrices
    of symbols, computed entry by entry from the definition."""
    Z = block_layer()
    p, h = sp.expand(Z.blocks[0, 1]), sp.expand(Z.blocks[1, 1])
    p_paper = V["11"] * S * W["12"] * a + V["12"] * a * a.T * W["22"] * a
    h_paper = a + V["21"] * S * W["12"] * a + V["22"] * a * a.T * W["22"] * a
    check(
        is_zero_matrix(p - p_paper) and is_zero_matrix(h - h_paper),
        "Lemma C.1.1: p and h are the paper's",
    )
    check(
        not {W["11"], W["21"]} & (p.free_symbols | h.free_symbols),
        "Lemma C.1.1: W11 and W21 do not enter p and h",
    )
    explicit = _explicit_column(p, h)
    return {"p": p, "h": h, "explicit": explicit}


def _explicit_column(p, h, k: int = 2) -> dict:
    """d = n = k: the last column of E + V E E^T W E entry by entry, against
    p and h evaluated on the same matrices; ||c||^2 = ||p||^2 + ||h||^2."""

    def mat(name, rows, cols_):
        return sp.Matrix(
            rows,
            cols_,
            lambda i, j: sp.Symbol(f"{name}{i + 1}{j + 1}", real=True),
        )

    Xe = mat("x", k, k)
    ae = sp.Matrix(k, 1, lambda i, _: sp.Symbol(f"a{i + 1}", real=True))
    We = {b: mat(f"w^{{{b}}}_", k, k) for b in BLOCKS}
    Ve = {b: mat(f"v^{{{b}}}_", k, k) for b in BLOCKS}
    E = sp.diag(Xe, ae)
    Wm = sp.Matrix(
        sp.BlockMatrix([[We["11"], We["12"]], [We["21"], We["22"]]])
    )
    Vm = sp.Matrix(
        sp.BlockMatrix([[Ve["11"], Ve["12"]], [Ve["21"], Ve["22"]]])
    )
    col = (E + Vm * E * E.T * Wm * E)[:, k]
    values = {
        X: Xe,
        a: ae,
        **{W[b]: We[b] for b in BLOCKS},
        **{V[b]: Ve[b] for b in BLOCKS},
    }
    pe = sp.Matrix(p.subs(values).doit())
    he = sp.Matrix(h.subs(values).doit())
    check(
        is_zero_matrix(col[:k, :] - pe),
        f"Lemma C.1.1 (d = n = {k}): the top half of the column is p",
    )
    check(
        is_zero_matrix(col[k:, :] - he),
        f"Lemma C.1.1 (d = n = {k}): the bottom half of the column is h",
    )
    check(
        sp.expand(col.dot(col) - pe.dot(pe) - he.dot(he)) == 0,
        f"Lemma C.1.1 (d = n = {k}): ||z||^2 = ||p||^2 + ||h||^2",
    )
    return {"c": col, "p": pe, "h": he}


@cache
def structured_gradients() -> dict:
    """Appendix C.1.1 at a structured point W12 = alpha I, V21 = beta I
    (other blocks 0), d = 2: the derivative of the per-sample loss
    ||y - t||^2 along a perturbation B -> B + epsilon Omega of each block B,
    from the definition y = h/||z|| with z = [0; a] + V (E E^T) W [0; a] and
    E E^T = diag(S, a a^T) (:func:`block_layer`). S is a symmetric matrix of
    symbols and t a fixed target vector of symbols (any t). Checks: the
    gradients of W11, W21, W22, V11, V12, V22 are exactly 0;
    ``dL/dW12 = beta S g_h a^T`` and ``dL/dV21 = alpha g_h (S a)^T`` with
    ``g_h = 2 (I - h h^T/||h||^2)(y - t)/||h||``, h = a + alpha beta S a.
    """
    k, eps = 2, sp.Symbol("epsilon", real=True)
    s11, s12, s22 = sp.symbols("s11 s12 s22", real=True)
    Se = sp.Matrix([[s11, s12], [s12, s22]])
    ae = sp.Matrix(sp.symbols("a1 a2", real=True))
    te = sp.Matrix(sp.symbols("t1 t2", real=True))
    delta = sp.Matrix(k, k, lambda i, j: sp.Symbol(f"delta{i + 1}{j + 1}"))
    Z0, I2 = sp.zeros(k), sp.eye(k)
    at = {
        "W": {"11": Z0, "12": alpha * I2, "21": Z0, "22": Z0},
        "V": {"11": Z0, "12": Z0, "21": beta * I2, "22": Z0},
    }
    gram = sp.diag(Se, ae * ae.T)
    e = sp.Matrix([0] * k + list(ae))

    def full(blocks):
        return sp.Matrix(
            sp.BlockMatrix(
                [[blocks["11"], blocks["12"]], [blocks["21"], blocks["22"]]]
            )
        )

    grads = {}
    for name in ("W", "V"):
        for b in BLOCKS:
            moved = {m: dict(at[m]) for m in at}
            moved[name][b] = moved[name][b] + eps * delta
            col = e + full(moved["V"]) * gram * full(moved["W"]) * e
            y = col[k:, :] / sp.sqrt(col.dot(col))
            dloss = sp.diff((y - te).dot(y - te), eps).subs(eps, 0)
            grads[name + b] = sp.Matrix(
                [
                    [sp.diff(dloss, delta[i, j]) for j in range(k)]
                    for i in range(k)
                ]
            )
    for b in ("W11", "W21", "W22", "V11", "V12", "V22"):
        check(
            grads[b] == sp.zeros(k),
            f"Appendix C.1.1: the {b} gradient vanishes at the structure",
        )
    h = ae + alpha * beta * Se * ae
    H = sp.expand(h.dot(h))
    r = sp.sqrt(H)
    g_h = 2 / r * (I2 - h * h.T / r**2) * (h / r - te)
    paper = {"W12": beta * Se * g_h * ae.T, "V21": alpha * g_h * (Se * ae).T}
    for b, formula in paper.items():
        check(
            all(
                equal_given_norm(grads[b][i], formula[i], H)
                for i in range(k * k)
            ),
            f"Appendix C.1.1: the paper's {b} gradient formula",
        )
    return {
        **grads,
        "g_h": g_h,
        "h": h,
        "H": H,
        "S": Se,
        "a": ae,
        "t": te,
        "paper": paper,
    }


def induction() -> dict:
    """Appendix C.1.2, symbolic d, n. Base case (W = 0, V21 = beta0 I, other
    blocks 0): p = 0, h = a. Inductive step (W12 = alpha I, V21 = beta I):
    p = 0, h = a + alpha beta S a. At both points the token columns of X
    come out unchanged (top block X, bottom block 0), so LN leaves them."""
    Z = block_layer()
    zero = sp.ZeroMatrix(dim, dim)

    def at(w, v):
        point = {M[b]: zero for M in (W, V) for b in BLOCKS}
        point[W["12"]], point[V["21"]] = w, v
        return [
            sp.expand(Z.blocks[i, j].subs(point).doit())
            for i, j in ((0, 1), (1, 1), (0, 0), (1, 0))
        ]

    base = at(zero, beta0 * sp.Identity(dim))
    step = at(alpha * sp.Identity(dim), beta * sp.Identity(dim))
    for case, (p_, _, x_top, x_bottom) in (
        ("base case", base),
        ("inductive step", step),
    ):
        check(
            is_zero_matrix(p_) and is_zero_matrix(x_bottom),
            f"Appendix C.1.2, {case}: p = 0, tokens' bottom block 0",
        )
        check(
            is_zero_matrix(x_top - X),
            f"Appendix C.1.2, {case}: the tokens' top block stays X",
        )
    check(is_zero_matrix(base[1] - a), "Appendix C.1.2, base case: h = a")
    check(
        is_zero_matrix(step[1] - (a + alpha * beta * S * a)),
        "Appendix C.1.2, inductive step: h = a + alpha beta S a",
    )
    return {
        "p0": base[0],
        "h0": base[1],
        "p": step[0],
        "h": step[1],
        "x_columns": step[2],
    }


def schur(k: int = 3) -> dict:
    """Schur's lemma (Lemma F.1) on the orthogonal matrices that the proof
    needs: a k x k matrix J of symbols that commutes with the k sign flips
    diag(+-1) and the cyclic permutation must be a multiple of I (solved as
    linear equations, :func:`lnpower.symbolic.appendix_a.commutant`). The flips
    alone leave the k diagonal entries free, the permutation alone the k
    entries of a circulant."""
    gens = sign_and_cycle(k)
    both = commutant(gens)
    check(
        len(both.free_symbols) == 1 and both == both[0, 0] * sp.eye(k),
        f"Lemma F.1 (k = {k}): the flips and the cycle force c I",
    )
    only_flips, only_cyclic = commutant(gens[:k]), commutant(gens[k:])
    check(
        len(only_flips.free_symbols) == len(only_cyclic.free_symbols) == k,
        f"Lemma F.1 (k = {k}): either kind alone leaves k entries free",
    )
    return {"M": both, "flips": only_flips, "cyclic": only_cyclic}


# --- C.2: gamma diverges (C.2.1) and grows like t^(1/3) (C.2.2)


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
    check(
        equal_given_norm(trW, beta * aSg, g["H"]),
        "Appendix C.2.1: tr(dL/dW12) = beta a^T S g_h",
    )
    check(
        equal_given_norm(trV, alpha * aSg, g["H"]),
        "Appendix C.2.1: tr(dL/dV21) = alpha a^T S g_h",
    )
    mean_aSg = d * F  # E[a^T S g_h] = d F defines F
    out = {
        "alpha": alpha - eta * (beta * mean_aSg) / d,
        "beta": beta - eta * (alpha * mean_aSg) / d,
    }
    check(
        is_zero(out["alpha"] - (alpha - eta * beta * F)),
        "Appendix C.2.1: alpha' = alpha - eta beta F",
    )
    check(
        is_zero(out["beta"] - (beta - eta * alpha * F)),
        "Appendix C.2.1: beta' = beta - eta alpha F",
    )
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
    check(
        is_zero(H - (1 + 2 * gamma * q + gamma**2 * s**2)),
        "Appendix C.2.1: ||h||^2 = 1 + 2 gamma q + gamma^2 s^2",
    )
    check(
        is_zero(hSa - (q + gamma * s**2)) and SaSa == s**2,
        "Appendix C.2.1: h^T S a = q + gamma s^2 and ||Sa||^2 = s^2",
    )
    nh, nt = sp.symbols("N_h N_t", positive=True)  # ||h||, ||S a||
    y, t = h / nh, S * a / nt
    values = {nh: sp.sqrt(H), nt: sp.sqrt(SaSa)}
    loss = scalar((y - t).T * (y - t), rules).subs(values)
    cos = (hSa / (nh * nt)).subs(values)
    check(
        sp.simplify(loss - (2 - 2 * cos)) == 0,
        "Appendix C.2.1: loss = ||y - y_target||^2 = 2 - 2 cos theta",
    )
    g_h = 2 / nh * (y - t - h * (h.T * (y - t)) / nh**2)
    aSg = scalar((S * a).T * g_h, rules).subs(values)
    dloss = sp.diff(2 - 2 * cos, gamma)
    check(
        sp.simplify(aSg - dloss) == 0,
        "Appendix C.2.1: d loss/d gamma = a^T S g_h",
    )
    to_xc = {q: c * s, gamma: x / s}
    cos_xc = sp.simplify(cos.subs(to_xc))
    dloss_xc = sp.simplify(dloss.subs(to_xc))
    check(
        sp.simplify(cos_xc - (c + x) / sp.sqrt(h2)) == 0,
        "Appendix C.2.1: cos theta = (omega + x)/sqrt(x^2 + 2x omega + 1)",
    )
    check(
        sp.simplify(
            dloss_xc / (-2 * s * (1 - c**2) / h2 ** sp.Rational(3, 2)) - 1
        )
        == 0,
        "Appendix C.2.1: d loss/d gamma = -2 s (1 - omega^2)/h2^(3/2)",
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
    check(
        sp.expand(gap - minors) == 0,
        f"Appendix C.2.1: Lagrange's identity (k = {k})",
    )
    check(
        is_zero_matrix(a.T * S * a - (X.T * a).T * (X.T * a)),
        "Appendix C.2.1: q = a^T S a = ||X^T a||^2",
    )
    check(
        sp.expand(h2 - ((x + c) ** 2 + 1 - c**2)) == 0,
        "Appendix C.2.1: x^2 + 2x omega + 1 = (x + omega)^2 + 1 - omega^2",
    )
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
    check(
        is_zero(
            delta - paper.subs({Q: alpha**2 + beta**2, gamma: alpha * beta})
        ),
        "Appendix C.2.1: gamma' - gamma = -eta F Q + eta^2 gamma F^2",
    )
    check(
        is_zero(alpha**2 + beta**2 - 2 * alpha * beta - (alpha - beta) ** 2),
        "Appendix C.2.1: Q - 2 gamma = (alpha - beta)^2",
    )
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
    check(
        is_zero(lhs - total),
        "Appendix C.2.2: gamma'^3 - gamma^3 = A + B + C",
    )
    return {"terms": terms, "Delta": Delta}


def balance() -> dict:
    """Appendix C.2.2, step 2(b): ``Q^2 - D^2 = 4 gamma^2`` and, from the
    recursion, ``D' = (1 - eta^2 F^2) D``, ``Q' = (1 + eta^2 F^2) Q -
    4 eta gamma F``. Hence Q/(2 gamma) = sqrt(1 + D^2/(4 gamma^2)) (Q >= 0),
    which tends to 1 as gamma -> oo while ``|D| <= |D_0|`` (squeeze)."""
    a1, b1 = _step()
    sub = {Q: alpha**2 + beta**2, D: beta**2 - alpha**2, gamma: alpha * beta}
    check(
        is_zero((Q**2 - D**2 - 4 * gamma**2).subs(sub)),
        "Appendix C.2.2: Q^2 - D^2 = 4 gamma^2",
    )
    D_next = (1 - eta**2 * F**2) * D
    Q_next = (1 + eta**2 * F**2) * Q - 4 * eta * gamma * F
    check(
        is_zero(b1**2 - a1**2 - D_next.subs(sub)),
        "Appendix C.2.2: D' = (1 - eta^2 F^2) D",
    )
    check(
        is_zero(a1**2 + b1**2 - Q_next.subs(sub)),
        "Appendix C.2.2: Q' = (1 + eta^2 F^2) Q - 4 eta gamma F",
    )
    g = sp.Symbol("gamma", positive=True)
    ratio = sp.sqrt(4 * g**2 + D**2) / (2 * g)
    check(
        sp.simplify(ratio - sp.sqrt(1 + D**2 / (4 * g**2))) == 0,
        "Appendix C.2.2: Q/(2 gamma) = sqrt(1 + D^2/(4 gamma^2))",
    )
    D0 = sp.Symbol("D_0", positive=True)
    upper = sp.sqrt(1 + D0**2 / (4 * g**2))
    check(
        sp.limit(upper, g, sp.oo) == 1,
        "Appendix C.2.2: sqrt(1 + D_0^2/(4 gamma^2)) -> 1 (squeeze)",
    )
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
    check(
        is_zero(lead - (s**2 - q**2) * v**2 / s**4),
        "Appendix C.2.2: loss = (s^2 - q^2)/(gamma^2 s^4) + O(gamma^-3)",
    )
    dl = red["dloss"].subs(gamma, g)
    dlim = sp.limit(g**3 * dl, g, sp.oo)
    check(
        is_zero(dlim + 2 * (s**2 - q**2) / s**4),
        "Appendix C.2.2: gamma^3 d loss/d gamma -> -2 (s^2 - q^2)/s^4",
    )
    bound = -2 * (1 - c**2) / s**2  # the limit, in c = q/s
    ratio = sp.simplify((x / s) ** 3 * red["dloss_xc"] / bound)
    check(
        sp.simplify(ratio - (x**2 / h2) ** sp.Rational(3, 2)) == 0,
        "Appendix C.2.2: the domination ratio is (x^2/h2)^(3/2)",
    )
    check(
        sp.expand(h2 - x**2 - (2 * x * c + 1)) == 0,
        "Appendix C.2.2: h2 = x^2 + (2 x omega + 1) >= x^2",
    )
    terms = cube_increment()["terms"]
    sub = {F: phi * u**3, Q: 2 * psi / u, gamma: 1 / u}
    poly = {k: sp.expand(term.subs(sub)) for k, term in terms.items()}
    check(
        all(term.is_polynomial(phi, psi, u) for term in poly.values()),
        "Appendix C.2.2: A, B and C are polynomials in (phi, psi, u)",
    )
    check(
        is_zero(poly["A"] + 6 * eta * phi * psi),
        "Appendix C.2.2: A = -6 eta phi psi",
    )
    check(
        poly["B"].subs(u, 0) == 0 and poly["C"].subs(u, 0) == 0,
        "Appendix C.2.2: B and C vanish at u = 0",
    )
    limits = {k: v.subs({phi: -C1, psi: 1, u: 0}) for k, v in poly.items()}
    check(
        limits == {"A": 6 * eta * C1, "B": 0, "C": 0},
        "Appendix C.2.2: A -> 6 eta C1 and B, C -> 0",
    )
    F_lim = (1 / d) * (-2 * Upsilon3)  # E[gamma^3 dloss] / d
    check(
        is_zero(F_lim.subs(Upsilon3, C1 * d / 2) + C1),
        "Appendix C.2.2: gamma^3 F -> -C1 with C1 = 2 Upsilon3/d",
    )
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


# --- C.3: the loss bound and the number of iterations


def unit_distance() -> dict:
    """Appendix C.3, step 1, for symbolic d: for unit vectors y, t with
    y^T t = cos theta, ``||y - t||^2 = 2 - 2 cos theta``."""
    y = sp.MatrixSymbol("y", dim, 1)
    t = sp.MatrixSymbol("t", dim, 1)
    k = sp.Symbol(r"\cos\theta", real=True)
    dist = scalar(
        (y - t).T * (y - t), {y.T * y: 1, t.T * t: 1, y.T * t: k, t.T * y: k}
    )
    check(
        is_zero(dist - (2 - 2 * k)),
        "Appendix C.3: ||y - t||^2 = 2 - 2 cos theta for unit y, t",
    )
    return {"distance": dist, "cos": k}


def loss_bound() -> dict:
    """Appendix C.3, step 2: for 0 <= cos theta <= 1, ``2 - 2 cos theta <= 2
    sin^2 theta`` (the gap is 2 cos theta (1 - cos theta)); ``sin^2 theta =
    (1 - omega^2)/(x^2 + 2x omega + 1) <= (1 - omega^2)/x^2`` (the gap is (1
    - omega^2)(2x omega + 1)/(x^2 (x^2 + 2x omega + 1)) >= 0); and ``2 (1 -
    omega^2)/x^2 = 2 (s^2 - q^2)/(gamma^2 s^4)``, whose mean is 2
    Upsilon3/gamma^2."""
    k = sp.Symbol("k", real=True)  # cos theta
    gap1 = sp.factor(2 * (1 - k**2) - (2 - 2 * k))
    check(
        is_zero(gap1 - 2 * k * (1 - k)),
        "Appendix C.3: 2 sin^2 theta - (2 - 2 cos theta) = 2 cos (1 - cos)",
    )
    cos = reduced_loss()["cos_xc"]
    sin2 = sp.cancel(sp.expand(1 - cos**2))
    check(
        is_zero(sin2 - (1 - c**2) / h2),
        "Appendix C.3: sin^2 theta = (1 - omega^2)/(x^2 + 2x omega + 1)",
    )
    gap2 = sp.factor(sp.cancel((1 - c**2) / x**2 - sin2))
    check(
        is_zero(gap2 - (1 - c**2) * (2 * x * c + 1) / (x**2 * h2)),
        "Appendix C.3: the gap of sin^2 theta <= (1 - omega^2)/x^2",
    )
    bound = 2 * (1 - c**2) / x**2
    in_sq = sp.simplify(bound.subs({c: q / s, x: gamma * s}))
    check(
        is_zero(in_sq - 2 * (s**2 - q**2) / (gamma**2 * s**4)),
        "Appendix C.3: 2 (1 - omega^2)/x^2 = 2 (s^2 - q^2)/(gamma^2 s^4)",
    )
    return {
        "gap_cos": gap1,
        "sin2": sin2,
        "gap_sin": gap2,
        "bound": bound,
        "bound_sq": in_sq,
    }


def iterations() -> dict:
    """Appendix C.3, step 3: with loss <= 2 Upsilon3/gamma^2 and
    gamma_t >= C2 t^(1/3), C2 = (2 eta C1)^(1/3), C1 = 2 Upsilon3/d, the loss
    is <= eps once t >= T*(eps) = d sqrt(Upsilon3/2)/(eta eps^(3/2))."""
    t, eps, et = sp.symbols("t epsilon eta", positive=True)
    C2 = (2 * et * C1) ** sp.Rational(1, 3)
    bound_t = 2 * Upsilon3 / (C2 * t ** sp.Rational(1, 3)) ** 2
    (root,) = sp.solve(sp.Eq(bound_t, eps), t)
    Tstar = sp.simplify(root.subs(C1, 2 * Upsilon3 / d))
    closed = d * sp.sqrt(Upsilon3 / 2) / (et * eps ** sp.Rational(3, 2))
    check(
        sp.simplify(Tstar - closed) == 0,
        "Appendix C.3: T*(eps) = d sqrt(Upsilon3/2)/(eta eps^(3/2))",
    )
    return dict(T_star=Tstar, C2=C2, bound_t=bound_t, eps=eps, t=t, eta=et)
