"""The SymPy derivations of Appendix C (lnpower.symbolic.appendix_c): each
derived object is checked against an independent numerical computation
(the model's forward pass and autograd, numpy), and wrong variants of the
paper's formulas are rejected."""

import math

import numpy as np
import pytest
import sympy as sp
import torch

from lnpower import model
from lnpower.symbolic import appendix_c as AC
from lnpower.symbolic.common import (
    DerivationFailed,
    F,
    alpha,
    beta,
    eta,
    gamma,
)


def _rng(seed):
    return np.random.default_rng(seed)


def test_output_lemma_is_the_paper_and_rejects_a_variant():
    lemma = AC.output_lemma()
    W, V, X, a = AC.W, AC.V, AC.X, AC.a
    S = X * X.T
    p = V["11"] * S * W["12"] * a + V["12"] * a * a.T * W["22"] * a
    h = a + V["21"] * S * W["12"] * a + V["22"] * a * a.T * W["22"] * a
    assert AC.is_zero_matrix(lemma["p"] - p)
    assert AC.is_zero_matrix(lemma["h"] - h)
    swapped = V["12"] * S * W["12"] * a + V["11"] * a * a.T * W["22"] * a
    assert not AC.is_zero_matrix(lemma["p"] - swapped)
    assert not AC.is_zero_matrix(lemma["h"] - (h - a))


def test_output_lemma_matches_the_model():
    """y = h/||c|| from the explicit d = n = 2 column, against model.layer."""
    ex = AC.output_lemma()["explicit"]
    col = ex["c"]
    rng, vals = _rng(0), {}

    def entry(name):
        return vals.setdefault(sp.Symbol(name, real=True), rng.normal())

    def mat(name):
        return np.array(
            [[entry(f"{name}{i}{j}") for j in (1, 2)] for i in (1, 2)]
        )

    X = mat("x")
    a = np.array([entry(f"a{i}") for i in (1, 2)])
    W = np.block(
        [[mat("w^{11}_"), mat("w^{12}_")], [mat("w^{21}_"), mat("w^{22}_")]]
    )
    V = np.block(
        [[mat("v^{11}_"), mat("v^{12}_")], [mat("v^{21}_"), mat("v^{22}_")]]
    )
    assert col.free_symbols <= set(vals)
    E = np.zeros((4, 3))
    E[:2, :2], E[2:, 2] = X, a
    y = model.predict(*(torch.tensor(M) for M in (E, W, V))).numpy()
    c = np.array([float(v.subs(vals)) for v in col])
    h = np.array([float(v.subs(vals)) for v in ex["h"]])
    assert np.allclose(c[2:], h)
    assert np.allclose(y, h / np.linalg.norm(c), rtol=1e-12, atol=1e-14)


def test_structured_gradients_match_autograd():
    g = AC.structured_gradients()
    rng = _rng(1)
    X = rng.normal(size=(2, 2))
    a = rng.normal(size=2)
    a /= np.linalg.norm(a)
    t = rng.normal(size=2)
    al, be = 0.7, -1.3
    S = X @ X.T
    vals = {
        sp.Symbol("s11", real=True): S[0, 0],
        sp.Symbol("s12", real=True): S[0, 1],
        sp.Symbol("s22", real=True): S[1, 1],
        sp.Symbol("a1", real=True): a[0],
        sp.Symbol("a2", real=True): a[1],
        sp.Symbol("t1", real=True): t[0],
        sp.Symbol("t2", real=True): t[1],
        alpha: al,
        beta: be,
    }
    W, V = model.structured(2, al, be)
    W.requires_grad_()
    V.requires_grad_()
    E = torch.zeros(4, 3, dtype=torch.float64)
    E[:2, :2], E[2:, 2] = torch.tensor(X), torch.tensor(a)
    y = model.predict(E, W, V)
    ((y - torch.tensor(t)) ** 2).sum().backward()
    for M, grad in (("W", W.grad), ("V", V.grad)):
        for b, block in model.blocks(grad).items():
            derived = np.array(g[M + b].subs(vals).evalf(), dtype=float)
            assert np.allclose(
                derived, block.numpy(), rtol=1e-10, atol=1e-12
            ), M + b
    assert np.abs(model.blocks(W.grad)["12"].numpy()).max() > 1e-3


def test_equal_given_norm_can_fail():
    u, v = sp.symbols("u v", real=True)
    H = u**2 + v**2 + 1
    r = sp.sqrt(H)
    assert AC.equal_given_norm(H / r, r, H)
    assert AC.equal_given_norm(u / r**3 * H, u / r, H)
    assert not AC.equal_given_norm(r, -r, H)
    assert not AC.equal_given_norm(u / r, v / r, H)


def test_wrong_gradient_formula_is_rejected():
    g = AC.structured_gradients()
    swapped = alpha * g["S"] * g["g_h"] * g["a"].T  # alpha for beta
    no_factor = g["S"] * g["g_h"] * g["a"].T
    for wrong in (swapped, no_factor):
        assert not all(
            AC.equal_given_norm(x, y, g["H"]) for x, y in zip(g["W12"], wrong)
        )


def test_induction():
    ind = AC.induction()
    a, S = AC.a, AC.X * AC.X.T
    assert AC.is_zero_matrix(ind["p0"]) and AC.is_zero_matrix(ind["p"])
    assert AC.is_zero_matrix(ind["h0"] - a)
    assert AC.is_zero_matrix(ind["h"] - a - alpha * beta * S * a)
    assert not AC.is_zero_matrix(ind["h"] - a - alpha * S * a)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_schur(k):
    out = AC.schur(k)
    M = out["M"]
    assert len(M.free_symbols) == 1 and M == M[0, 0] * sp.eye(k)
    assert len(out["flips"].free_symbols) == k  # not enough alone
    assert len(out["cyclic"].free_symbols) == k


def test_symmetric_recursion():
    rec = AC.symmetric_recursion()
    assert sp.expand(rec["alpha"] - (alpha - eta * beta * F)) == 0
    assert sp.expand(rec["beta"] - (beta - eta * alpha * F)) == 0


def _sample(seed, d=5, n=7):
    rng = _rng(seed)
    X = rng.normal(size=(d, n))
    X /= np.linalg.norm(X, axis=0)
    a = rng.normal(size=d)
    return X @ X.T, a / np.linalg.norm(a)


@pytest.mark.parametrize("seed", [0, 1])
def test_reduced_loss_against_numpy(seed):
    red = AC.reduced_loss()
    S, a = _sample(seed)
    Sa = S @ a
    s_, q_ = np.linalg.norm(Sa), a @ Sa
    loss = sp.lambdify((gamma, AC.s, AC.q), red["loss"])
    dloss = sp.lambdify((gamma, AC.s, AC.q), red["dloss"])
    dxc = sp.lambdify((AC.s, AC.c, AC.x), red["dloss_xc"])

    def direct(g):
        h = a + g * Sa
        return np.sum((h / np.linalg.norm(h) - Sa / s_) ** 2)

    for g in (0.0, 0.4, 3.0):
        assert math.isclose(loss(g, s_, q_), direct(g), rel_tol=1e-12)
        fd = (direct(g + 1e-6) - direct(g - 1e-6)) / 2e-6
        assert math.isclose(dloss(g, s_, q_), fd, rel_tol=1e-6)
        assert math.isclose(dxc(s_, q_ / s_, g * s_), fd, rel_tol=1e-6)
        assert dloss(g, s_, q_) < 0


def test_cauchy_schwarz_numerically():
    cs = AC.cauchy_schwarz()
    rng = _rng(3)
    u_, v_ = rng.normal(size=3), rng.normal(size=3)
    vals = {
        **{sp.Symbol(f"e{i + 1}", real=True): u_[i] for i in range(3)},
        **{sp.Symbol(f"f{i + 1}", real=True): v_[i] for i in range(3)},
    }
    gap = (u_ @ u_) * (v_ @ v_) - (u_ @ v_) ** 2
    assert math.isclose(float(cs["lagrange"].subs(vals)), gap, rel_tol=1e-12)


def test_increments_against_one_step():
    rng = _rng(4)
    al, be, f, et = rng.normal(size=4)
    a1, b1 = al - et * be * f, be - et * al * f
    g0, Q0, D0 = al * be, al**2 + be**2, be**2 - al**2
    vals = {alpha: al, beta: be, F: f, eta: et, gamma: g0, AC.Q: Q0, AC.D: D0}
    inc = AC.gamma_increment()["delta"]
    assert math.isclose(float(inc.subs(vals)), a1 * b1 - g0, rel_tol=1e-12)
    terms = AC.cube_increment()["terms"]
    total = sum(float(v.subs(vals)) for v in terms.values())
    assert math.isclose(total, (a1 * b1) ** 3 - g0**3, rel_tol=1e-10)
    wrong_B = 3 * eta**2 * gamma**2 * F**2  # gamma^2 for gamma^3
    wrong = total - float((terms["B"] - wrong_B).subs(vals))
    assert not math.isclose(wrong, (a1 * b1) ** 3 - g0**3, rel_tol=1e-6)
    bal = AC.balance()
    assert math.isclose(
        float(bal["D_next"].subs(vals)), b1**2 - a1**2, rel_tol=1e-12
    )
    assert math.isclose(
        float(bal["Q_next"].subs(vals)), a1**2 + b1**2, rel_tol=1e-12
    )


def test_large_gamma():
    lg = AC.large_gamma()
    S, a = _sample(5)
    Sa = S @ a
    s_, q_ = np.linalg.norm(Sa), a @ Sa
    g = 1e4
    h = a + g * Sa
    loss = np.sum((h / np.linalg.norm(h) - Sa / s_) ** 2)
    lead = float(lg["loss_leading"].subs({gamma: g, AC.s: s_, AC.q: q_}))
    assert math.isclose(loss, lead, rel_tol=1e-3)
    assert lg["limits"] == {"A": 6 * eta * AC.C1, "B": 0, "C": 0}
    assert set(AC.ln_large_gamma()) == {"loss_leading", "increment_limit"}
    assert AC.ln_large_gamma()["increment_limit"] == 6 * eta * AC.C1


def test_loss_bound_numerically():
    lb = AC.loss_bound()
    loss = sp.lambdify((AC.x, AC.c), AC.reduced_loss()["loss_xc"])
    bound = sp.lambdify((AC.x, AC.c), lb["bound"])
    x_ = np.geomspace(1e-2, 1e3, 50)[:, None]
    c_ = np.linspace(0, 1, 21)
    assert (loss(x_, c_) <= bound(x_, c_) + 1e-14).all()
    assert (
        (2 * (1 - c_**2) / (x_**2 + 2 * x_ * c_ + 1)) - loss(x_, c_) >= -1e-14
    ).all()  # the 2 sin^2 step


def test_unit_distance_and_iterations():
    assert AC.unit_distance()["distance"] == 2 - 2 * AC.unit_distance()["cos"]
    it = AC.iterations()
    vals = {
        it["eps"]: 1e-3,
        it["eta"]: 0.1,
        AC.Upsilon3: 0.06,
        sp.Symbol("d", real=True): 16,
    }
    T = float(it["T_star"].subs(vals))
    C1 = 2 * 0.06 / 16
    C2 = (2 * 0.1 * C1) ** (1 / 3)
    assert math.isclose(
        2 * 0.06 / (C2 * T ** (1 / 3)) ** 2, 1e-3, rel_tol=1e-12
    )


def test_a_failing_step_raises_derivation_failed(monkeypatch):
    monkeypatch.setattr(AC, "is_zero", lambda expr: False)
    with pytest.raises(DerivationFailed, match="Appendix C.3: "):
        AC.unit_distance()
    # a step of a cached derivation (run past its cache) that fails; the
    # gradients it reads are computed first (cached), so that only its own
    # steps see the broken helper
    AC.structured_gradients()
    monkeypatch.setattr(AC, "equal_given_norm", lambda lhs, rhs, H: False)
    with pytest.raises(DerivationFailed, match=r"tr\(dL/dW12\)"):
        AC.symmetric_recursion.__wrapped__()
