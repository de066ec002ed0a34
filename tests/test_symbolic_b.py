"""The derivations of Appendix B (Theorem 4.2), lnpower.symbolic.appendix_b:
each test checks a derived result and that a wrong variant is rejected, and
that a step that does not hold raises ``DerivationFailed``."""

import math

import numpy as np
import pytest
import sympy as sp

from lnpower.symbolic import appendix_b as B
from lnpower.symbolic.common import (
    DerivationFailed,
    F,
    alpha,
    beta,
    d,
    eta,
    gamma,
    k1,
    k2,
    k3,
    n,
)
from lnpower.tasks import POWER_STEP_TARGETS, Task, generator


def test_identify_recovers_coefficients_and_rejects_the_rest():
    x, y, c = sp.symbols("x y c", real=True)
    found = B.identify(
        2 * c * x**2 + 3 * x * y, {"xx": x**2, "xy": x * y}, [x, y]
    )
    assert found == {"xx": 2 * c, "xy": 3}
    with pytest.raises(ValueError):  # y^2 is not in the span
        B.identify(x**2 + y**2, {"xx": x**2, "xy": x * y}, [x, y])
    with pytest.raises(ValueError):  # not unique: the basis is dependent
        B.identify(x**2, {"a": x**2, "b": 2 * x**2}, [x, y])


def test_sphere_average_second_moments_only():
    v = sp.symbols("v0:3", real=True)
    assert B.sphere_average(
        v[0] ** 2 + 5 * v[0] * v[1] + v[2] + 7, v, 3
    ) == 7 + sp.Rational(1, 3)
    with pytest.raises(ValueError):
        B.sphere_average(v[0] ** 4, v, 3)


def test_expectation_maps_known_monomials_and_refuses_others():
    assert (
        sp.expand(
            B.expectation(2 * gamma * B.q - B.q / B.s + 1)
            - (2 * gamma * k1 - B.k0 + 1)
        )
        == 0
    )
    with pytest.raises(KeyError):
        B.expectation(B.q**2)  # E[q^2] is not one of the kappas


def test_block_gradients_vanish_only_at_a_structured_point():
    grads = B.block_gradients()
    assert [k for k, G in grads.items() if not G.is_zero_matrix] == [
        "W12",
        "V21",
    ]
    # off the structure (W22 = V22 = eps I as well) the W22 gradient no longer
    # vanishes
    eps = sp.Symbol("epsilon", positive=True)
    lay = B.layer()
    point = B.structured_point()
    for M, name in ((lay["W"], "W22"), (lay["V"], "V22")):
        for i in range(2):
            point[B.block(M, name)[i, i]] = eps
    assert not B.gradients(point)["W22"].is_zero_matrix


def test_gradient_formulas_and_a_wrong_transpose():
    formulas = B.gradient_formulas()
    lay = B.layer()
    V21 = B.block(lay["V"], "V21")
    wrong = 2 * lay["S"] * V21 * (lay["y"] - lay["t"]) * lay["a"].T
    assert not (formulas["W12"][0] - wrong).applyfunc(sp.expand).is_zero_matrix


def test_population_gradient_unnormalised_and_refusals():
    pop = B.population_gradient("unnormalized")
    assert (
        sp.simplify(pop["W12"] - 2 * beta * (k1 + (alpha * beta - 1) * k2) / d)
        == 0
    )
    assert (
        sp.simplify(pop["W12"] - 2 * beta * (k1 + alpha * beta * k2) / d) != 0
    )
    with pytest.raises(ValueError):
        B.population_gradient("normalized")
    S = sp.MatrixSymbol("S", d, d)
    a = sp.MatrixSymbol("a", d, 1)
    with pytest.raises(ValueError):  # no moment given for S^3
        B.moment_expectation(S * S * S * a * a.T, S, a, {0: 1, 1: k1, 2: k2})


def test_scalar_dynamics():
    dyn = B.scalar_dynamics()
    assert dyn["residual_W12"] == 0 and dyn["residual_V21"] == 0
    assert sp.expand(dyn["alpha"] - (alpha - eta * beta * F)) == 0


def test_landscapes_and_the_basis_they_need():
    L1, L2 = B.landscape("normalized"), B.landscape("unnormalized")
    assert sp.simplify(L1["gamma_star"] - (k3 - k1) / k2) == 0
    assert sp.simplify(L2["gamma_star"] - (1 - k1 / k2)) == 0
    assert sp.simplify(L2["L_star"] - (1 - k1**2 / k2)) == 0
    assert sp.expand(L2["L"] - B.population_gradient()["L"]) == 0
    # the gamma coefficient of the normalised loss needs ||Sa||^2/s (i.e. s) in
    # the basis
    a = sp.Matrix(sp.symbols("a0:2", real=True))
    S = sp.Matrix(
        [
            [sp.Symbol("S00"), sp.Symbol("S01")],
            [sp.Symbol("S01"), sp.Symbol("S11")],
        ]
    )
    coeff = sp.expand((2 * a.T * S * a - 2 * (S * a).T * (S * a) / B.s)[0, 0])
    variables = [*a, *S.free_symbols, B.s]
    with pytest.raises(ValueError):
        B.identify(coeff, {"q": (a.T * S * a)[0, 0]}, variables)
    with pytest.raises(ValueError):
        B.landscape("subspace")


@pytest.mark.parametrize("target", POWER_STEP_TARGETS)
def test_landscape_is_the_monte_carlo_loss(target):
    X, a = Task("sphere", 6, 9).sample(3000, generator(1))
    Sa = (X @ (X.mT @ a[..., None]))[..., 0]
    q, s = (a * Sa).sum(-1).numpy(), Sa.norm(dim=-1).numpy()
    t = Sa / Sa.norm(dim=-1, keepdim=True) if target == "normalized" else Sa
    mom = {B.k0: (q / s).mean(), k1: q.mean(), k2: (s**2).mean(), k3: s.mean()}
    L = B.landscape(target)["L"].subs(mom)
    for g in (0.0, 0.3, 1.0):
        direct = ((a + g * Sa - t) ** 2).sum(-1).mean().item()
        assert math.isclose(float(L.subs(gamma, g)), direct, rel_tol=1e-12)
        wrong = L.subs(gamma, g) + 2 * float(
            mom[B.k0] - mom[k1]
        )  # kappa1 in place of kappa0
        assert not math.isclose(float(wrong), direct, rel_tol=1e-6)


def test_cauchy_schwarz_algebra():
    cs = B.cauchy_schwarz_step()
    assert sp.expand(cs["difference"] - (1 - B.q**2 / B.s**2)) == 0
    assert sp.expand(cs["difference"] - (1 - B.q / B.s)) != 0


def test_degenerate_case():
    assert all(v == 0 for v in B.gram_identity().values())
    ortho = B.orthonormal_case(3, 2)
    assert (
        ortho["kappa1"] == ortho["kappa2"] == sp.Rational(2, 3)
        and ortho["gamma_star"] == 0
    )
    full = B.orthonormal_case(
        3, 3
    )  # S = I: even the irreducible loss vanishes
    assert (
        B.landscape("unnormalized")["L_star"].subs(
            {k1: full["kappa1"], k2: full["kappa2"]}
        )
        == 0
    )


def test_kappas():
    ks = B.kappas_sphere()
    assert set(ks) >= {"kappa1", "kappa2"}
    assert ks["kappa2"].subs({d: 16, n: 32}) == sp.Rational(47, 8)  # 5.875
    assert ks["kappa2"].subs({d: 16, n: 32}) != sp.Rational(
        32**2, 16**2
    )  # no diagonal
    assert ks["kappa1"].subs({d: 16, n: 32}) == 2
    kr = B.kappas_rotated((3, 1, 1))
    assert kr == {"kappa1": sp.Rational(5, 3), "kappa2": sp.Rational(11, 3)}


def test_recursions_against_one_numerical_step():
    rng = np.random.default_rng(0)
    a0, b0, f, e = rng.normal(size=4)
    a1, b1 = a0 - e * b0 * f, b0 - e * a0 * f
    rec = B.scalar_recursions()
    vals = {
        gamma: a0 * b0,
        B.Q: a0**2 + b0**2,
        B.D: b0**2 - a0**2,
        F: f,
        eta: e,
    }
    for key, exact in (
        ("gamma", a1 * b1),
        ("Q", a1**2 + b1**2),
        ("D", b1**2 - a1**2),
    ):
        assert math.isclose(float(rec[key].subs(vals)), exact, rel_tol=1e-12)
    wrong = (gamma - eta * B.Q * F).subs(
        vals
    )  # without the eta^2 gamma F^2 term
    assert not math.isclose(float(wrong), a1 * b1, rel_tol=1e-6)
    assert set(B.recursions()) == {"gamma", "S", "D"}


def test_first_iteration_is_computed():
    assert (
        sp.expand(
            B.first_iteration() - 2 * eta * B.beta0 * k2 * B.gamma_star / d
        )
        == 0
    )
    step = B.first_step("unnormalized")
    assert sp.expand(step["alpha1"] - 2 * eta * B.beta0 * (k2 - k1) / d) == 0
    assert step["beta1"] == B.beta0


def test_q_increment_sign_needs_the_invariant_set():
    inc = B.q_increment()
    inside = {eta: 0.1, F: -0.3, B.Q: 1.2, gamma: 0.4}  # F <= 0, gamma >= 0
    outside = {
        eta: 0.1,
        F: 0.3,
        B.Q: 1.2,
        gamma: 0.4,
    }  # gamma beyond gamma*: F > 0
    assert inc.subs(inside) >= 0 and inc.subs(outside) < 0


def test_descent_lemma_and_level_set():
    lemma = B.descent_lemma()
    assert set(lemma) >= {"change", "ratio", "ratio_max"}
    assert lemma["ratio_max"] == sp.Rational(113, 512)
    assert B.level_set() == [0, 2 * B.gamma_star]


def test_contraction_along_the_recursion():
    factor = B.contraction()["factor"]
    kappa2, g_star, dim, lr = 5.875, 0.66, 16, 0.1
    w, v = 0.0, 1.0
    for _ in range(60):
        g, Q = w * v, w * w + v * v
        f = 2 * kappa2 / dim * (g - g_star)
        w, v = w - lr * v * f, v - lr * w * f
        ratio = (w * v - g_star) ** 2 / (g - g_star) ** 2
        bound = float(factor.subs({eta: lr, k2: kappa2, B.Q: Q, d: dim}))
        assert ratio <= bound
        assert (
            ratio > bound - 2 * lr * kappa2 * Q / dim
        )  # (1 - x)^2 > 1 - 2x: not trivial


def test_eta_max_at_the_papers_settings():
    kappa2 = 32 * 47 / 256
    out = B.eta_max(kappa2, 1 - 2 / kappa2, 16, 1.0)
    assert 0.1 < out["eta_max"] < 0.13
    g_star = 1 - 2 / kappa2
    assert out["eta_max"] == pytest.approx(
        16 / (8 * kappa2 * math.sqrt(1 + 16 * g_star**2))
    )
    first = B.eta_max_first_line(
        kappa2, 1 - 2 / kappa2, 16, 1.0, 0.5, 1.1, 0.66
    )
    assert len(first) == 6 and min(first) > 0


def test_legacy_api():
    land = B.no_ln_landscape("normalized")
    assert set(land) == {"L", "gamma_star", "L_star", "F"}
    assert isinstance(B.first_iteration(), sp.Expr)


def test_a_failing_step_raises_derivation_failed(monkeypatch):
    monkeypatch.setattr(B, "is_zero", lambda expr: False)
    with pytest.raises(DerivationFailed, match=r"Appendix B\.2\.3, Part 3"):
        B.contraction()
    with pytest.raises(DerivationFailed, match=r"gamma' = gamma - eta Q F"):
        B.scalar_recursions()
