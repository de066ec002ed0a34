"""The SymPy derivations of Appendices A, D, E and F
(lnpower.symbolic.appendix_a/_d): each test checks what a derivation returns
against an independent computation, and that a wrong variant is rejected.
Also ``check`` (it raises ``DerivationFailed``, also under ``python -O``)
and the counts of ``verify_all``."""

import math
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp
import torch

import lnpower
from lnpower import inference, model, symbolic, tasks, theory
from lnpower.symbolic import appendix_a, appendix_d
from lnpower.symbolic.common import DerivationFailed, check, d, eta, is_zero
from lnpower.tasks import Task, generator


def test_check_raises_derivation_failed():
    assert check(True, "a step that holds") is None
    with pytest.raises(DerivationFailed, match="Appendix B.2: gamma1"):
        check(False, "Appendix B.2: gamma1* = (kappa3 - kappa1)/kappa2")
    assert issubclass(DerivationFailed, ArithmeticError)
    assert not issubclass(DerivationFailed, AssertionError)


def test_python_O_keeps_the_checks():
    """``python -O`` removes assert statements but not ``check``: a false
    check raises, and so does a derivation whose step is made to fail."""
    snippet = textwrap.dedent(
        """
        import sys
        from lnpower.symbolic import appendix_b
        from lnpower.symbolic.common import DerivationFailed, check
        assert False  # removed under -O
        appendix_b.q_increment()  # every step holds
        try:
            check(False, "x")
        except DerivationFailed as e:
            print("raised:", e)
        appendix_b.is_zero = lambda expr: False  # a broken step
        try:
            appendix_b.q_increment()
        except DerivationFailed as e:
            print("raised:", e)
        print("optimize", sys.flags.optimize)
        """
    )
    lib = str(pathlib.Path(lnpower.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": lib, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, "-O", "-c", snippet],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    ).stdout.splitlines()
    assert out == [
        "raised: x",
        # q_increment's first step: scalar_recursions' gamma recursion
        "raised: Appendix B.2.3: gamma' = gamma - eta Q F + eta^2 gamma F^2",
        "optimize 1",
    ]


def test_verify_all_counts_the_checks_of_each_derivation():
    counts = symbolic.verify_all()
    assert list(counts) == list(symbolic.derivations())
    assert {name.split(".")[0] for name in counts} == set(symbolic.APPENDICES)
    # helpers that build an expression and check nothing: run, counted 0
    assert {name for name, k in counts.items() if k == 0} == {
        "appendix_b.layer",
        "appendix_b.structured_point",
        "appendix_b.paper_gradient_formulas",
        "appendix_b.quadratic_F",
    }
    assert (len(counts), sum(counts.values())) == (56, 315)
    assert counts["section3.collapse"] == 1
    # cached derivations (functools.cache) are run too, from cold caches:
    # symmetric_recursion's four steps and the eight of the cached
    # structured_gradients, which it calls
    assert counts["appendix_c.structured_gradients"] == 8
    assert counts["appendix_c.symmetric_recursion"] == 4 + 8
    # and every derivation counts the checks of the cached helpers it calls:
    # the two of block_layer, the eleven of the eigenbasis frame
    assert counts["appendix_c.induction"] == 6 + 2
    assert counts["appendix_d.power_expansion"] == 10 + 11
    # its own four steps and the three of scalar_recursions, which it calls
    assert counts["appendix_b.descent_lemma"] == 7
    assert counts["appendix_b.landscape(normalized)"] == 3
    assert counts["appendix_d.bound_certificates"] == 2  # upper and lower
    # counting lives in a context variable, set only inside verify_all
    from lnpower.symbolic.common import _CHECKS

    assert _CHECKS.get() is None
    # the counts do not depend on what ran before (warm caches)
    from lnpower.symbolic import appendix_c

    appendix_c.symmetric_recursion()
    appendix_d.power_expansion()
    assert symbolic.verify_all() == counts


@pytest.mark.parametrize("dim", [2, 3, 4])
def test_schur_lemma_needs_the_permutation(dim):
    M = appendix_a.schur_lemma(dim)
    assert M == M[0, 0] * sp.eye(dim) and len(M.free_symbols) == 1
    flips_only = appendix_a.commutant(appendix_a.sign_and_cycle(dim)[:dim])
    assert flips_only.is_diagonal() and len(flips_only.free_symbols) == dim


def test_zero_block_derivatives_one_loop():
    out = appendix_a.zero_block_derivatives(1)
    for name, dy in out.items():
        vanishes = all(sp.cancel(e) == 0 for e in dy)
        assert vanishes == (name not in ("W12", "V21")), name


def test_zero_blocks_match_autograd():
    X, a = Task("sphere", 4, 6).sample(20, generator(1))
    W, V = (M.requires_grad_() for M in model.structured(4, 0.4, 1.1))
    y = model.predict(tasks.embed(X, a), W, V, 2)
    loss = tasks.per_sample_loss(
        y, tasks.targets(X, a, "subspace"), "subspace"
    ).sum()
    gW, gV = torch.autograd.grad(loss, (W, V))
    for G, zero in ((gW, ("11", "21", "22")), (gV, ("11", "12", "22"))):
        assert all(model.blocks(G)[b].abs().max().item() == 0.0 for b in zero)
    assert model.blocks(gW)["12"].abs().max() > 0  # the check is not vacuous


def test_eigen_loss_one_loop_and_symbolic_L():
    out = appendix_a.eigen_loss(1)
    C, lam, rho = appendix_a.C, appendix_a.LAMBDAS, appendix_a.rho
    mu = [1 + rho * x for x in lam]
    assert is_zero(
        out["numerator"] - (C[1] ** 2 * mu[1] ** 2 + C[2] ** 2 * mu[2] ** 2)
    )
    assert not is_zero(
        out["numerator"] - (C[1] ** 2 * mu[1] + C[2] ** 2 * mu[2])
    )


def test_scalar_recursion_is_chain_rule():
    rec = appendix_a.scalar_recursion()
    Lp = sp.Symbol(r"\mathcal{L}_L'(\rho)")
    assert is_zero(rec["g_W12"] - appendix_a.v * Lp / d)
    assert not is_zero(rec["g_W12"] - appendix_a.v * Lp)  # the 1/d matters


def test_monotone_derivative_matches_finite_difference():
    out = appendix_a.monotone()
    dist2, t = appendix_a._per_sample_dist2()
    C, lam, rho, L = (
        appendix_a.C,
        appendix_a.LAMBDAS,
        appendix_a.rho,
        appendix_a.Lsym,
    )
    point = {
        lam[0]: 3.0,
        lam[1]: 2.0,
        lam[2]: 0.5,
        C[0]: 0.6,
        C[1]: 0.5,
        C[2]: 0.62,
        L: 3,
    }
    f = sp.lambdify(rho, dist2.subs(point))
    r0, h = 0.7, 1e-6
    fd = (f(r0 + h) - f(r0 - h)) / (2 * h)
    ts = {
        sp.Symbol(f"zeta{i + 1}", positive=True): t[i]
        .subs(point)
        .subs(rho, r0)
        for i in (1, 2)
    }
    claimed = float(out["derivative"].subs(point).subs(ts).subs(rho, r0))
    assert claimed < 0 and math.isclose(claimed, fd, rel_tol=1e-6)


def test_large_rho_matches_library_and_rejects_wrong_factor():
    big = appendix_a.large_rho()
    args = [*appendix_a.LAMBDAS, *appendix_a.C, appendix_a.Lsym]
    coef = sp.lambdify(args, big["c_L"], "numpy")
    sm = theory.draw(Task("sphere", 3, 6), 1_000, 5)
    for L in (1, 4):
        mine = coef(*sm.lam.T, *np.sqrt(sm.c2).T, L).mean()
        assert math.isclose(mine, theory.c_L(sm, L).value, rel_tol=1e-12)
        assert not math.isclose(
            mine / 2, theory.c_L(sm, L).value, rel_tol=1e-3
        )
    lim = sp.lambdify(args, big["limit"], "numpy")
    pm = lim(*sm.lam.T, *np.sqrt(sm.c2).T, 3).mean()
    assert math.isclose(
        pm, theory.power_method_loss(sm, 3).value, rel_tol=1e-12
    )


def test_weight_balance_along_a_recursion():
    bal = appendix_a.weight_balance()
    assert bal["limit"] == 1
    F = sp.Symbol("F", real=True)
    w, v, e = 0.3, 1.7, 0.1
    for f in (-0.5, -0.2, -0.05):
        w1, v1 = w - e * v * f, v - e * w * f
        ratio = (v1**2 - w1**2) / (v**2 - w**2)
        assert math.isclose(
            ratio, float(bal["D_ratio"].subs({F: f, eta: e})), rel_tol=1e-12
        )
        w, v = w1, v1


def test_looped_increment_limit_and_a_wrong_Q():
    lim = appendix_a.looped_increment()
    c = sp.Symbol("c_L", positive=True)
    assert is_zero(lim - 4 * eta * c / d)
    rho = appendix_a.rho
    Fr = sp.diff(c / rho, rho) / d
    wrong = (
        rho - eta * rho * Fr + eta**2 * rho * Fr**2
    )  # Q = rho: forgets the factor 2
    assert not is_zero(
        sp.limit(sp.expand(wrong**2 - rho**2), rho, sp.oo) - 4 * eta * c / d
    )


def test_power_expansion_coordinates():
    out = appendix_d.power_expansion(2)
    g = appendix_d.gamma
    for i in range(3):
        mu = 1 + g * appendix_d.LAMBDAS[i]
        assert is_zero(out["coords"][i] - appendix_d.C[i] * mu**2)
        assert not is_zero(out["coords"][i] - appendix_d.C[i] * mu**3)


@pytest.mark.parametrize("r", [1, 2])
def test_angle_expansion(r):
    out = appendix_d.angle_expansion(r)
    m, C = out["m"], appendix_d.C
    num = sum(C[i] ** 2 * m[i] ** 2 for i in range(r, 3))
    assert is_zero(
        out["dist2"] * sum(C[i] ** 2 * m[i] ** 2 for i in range(3)) - num
    )


def test_angle_expansion_rejects_bad_r():
    with pytest.raises(ValueError):
        appendix_d.angle_expansion(3)


@pytest.mark.parametrize("dim,r", [(3, 1), (3, 2), (4, 1), (4, 3)])
def test_bound_certificates_and_a_false_bound(dim, r):
    out = appendix_d.bound_certificates(dim, r)
    s, g = out["variables"]
    assert appendix_d.nonnegative_certificate(out["upper"], (*s, *g))
    assert appendix_d.nonnegative_certificate(out["lower"], (*s, *g))
    wrong = (
        out["perp2"] * out["xi_next"] * out["den"] - out["num"] * out["xi1"]
    )
    assert not appendix_d.nonnegative_certificate(wrong, (*s, *g))


def test_bound_certificates_rejects_bad_r():
    with pytest.raises(ValueError):
        appendix_d.bound_certificates(3, 3)


def test_contraction_factor_matches_library():
    cf = appendix_d.contraction_factor()
    g, l1, delta = sp.symbols("gamma lambda1 delta", positive=True)
    vals = {g: 0.7, l1: 3.0, delta: 1.2}
    assert math.isclose(
        float(cf["R"].subs(vals)),
        inference.contraction(3.0, 1.8, 0.7),
        rel_tol=1e-14,
    )
    assert (
        float(cf["excess"].subs(vals)) > 0 and float(cf["dR"].subs(vals)) < 0
    )


def test_scale_invariance_and_normalised_power():
    assert appendix_d.layer_is_normalised_power() == sp.zeros(2, 1)
    out = appendix_d.scale_invariance()
    assert sp.Symbol("k", nonzero=True, real=True) not in out.free_symbols


def test_mu_ordering():
    out = appendix_d.mu_ordering()
    assert out["dmu"].is_positive and out["dmu2L"].is_positive
