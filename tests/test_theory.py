"""Monte Carlo constants, the reduced dynamics and the symbolic derivations."""

import math

import numpy as np
import pytest

from lnpower import dynamics, inference, symbolic, theory
from lnpower.symbolic import appendix_b, common
from lnpower.tasks import Task


@pytest.mark.parametrize(
    "task", [Task("sphere", 8, 16), Task("rotated", 16, 32)]
)
def test_kappas_match_closed_forms(task):
    k = theory.kappas(theory.draw(task, 40_000, 3))
    ex = theory.kappas_exact(task)
    for name in ("kappa1", "kappa2"):
        assert abs(k[name].value - ex[name]) < 4 * k[name].stderr + 1e-12, name


def test_kappa_check_can_fail():
    k = theory.kappas(theory.draw(Task("sphere", 8, 16), 40_000, 3))
    wrong = 16 * 16 / 64  # n^2/d^2, forgetting the diagonal
    assert abs(k["kappa2"].value - wrong) > 4 * k["kappa2"].stderr


def test_no_ln_optimum_minimises_loss():
    sm = theory.draw(Task("sphere", 8, 16), 20_000, 0)
    for target in ("normalized", "unnormalized"):
        opt = theory.no_ln_optimum(sm, target)
        grid = np.linspace(
            opt["gamma_star"] - 0.5, opt["gamma_star"] + 0.5, 101
        )
        losses = theory.no_ln_loss(sm, grid, target)
        assert abs(grid[losses.argmin()] - opt["gamma_star"]) <= 0.005 + 1e-12
        assert math.isclose(losses.min(), opt["loss"], rel_tol=1e-3)
        assert opt["loss"] > 0
    n = theory.no_ln_optimum(sm, "normalized")
    assert n["loss"] >= n["lower_bound"]


def test_power_method_and_bounds():
    import torch

    from lnpower.tasks import generator, principal_projector

    X, a = Task("sphere", 8, 16).sample(1, generator(9))
    X, a = X[0], a[0]
    P, _ = principal_projector(X)
    for gamma in (None, 0.5):
        ys = inference.power_method(X, a, 12, gamma)
        for L in range(1, 13):
            lo, hi, R = inference.ood_bounds(X, a, L, gamma)
            s = inference.sin_angle(ys[L - 1], P).item()
            assert lo - 1e-12 <= s <= hi + 1e-12
    assert isinstance(ys, torch.Tensor)


def test_table_interpolation_error_bounded():
    sm = theory.draw(Task(), 5000, 2)
    assert dynamics.ln_layer_table(sm, points=1500).max_rel_error() < 1e-4
    assert dynamics.looped_table(sm, 4, points=600).max_rel_error() < 1e-3


def test_looped_dloss_is_derivative():
    sm = theory.draw(Task("sphere", 8, 16), 3000, 4)
    for rho in (0.05, 1.0, 20.0):
        h = 1e-6 * (1 + rho)
        fd = (
            theory.looped_loss(sm, rho + h, 3)
            - theory.looped_loss(sm, rho - h, 3)
        ) / (2 * h)
        assert math.isclose(theory.looped_dloss(sm, rho, 3), fd, rel_tol=1e-5)
        fd = (
            theory.ln_layer_loss(sm, rho + h)
            - theory.ln_layer_loss(sm, rho - h)
        ) / (2 * h)
        assert math.isclose(theory.ln_layer_dloss(sm, rho), fd, rel_tol=1e-5)


def test_c_L_is_large_rho_slope():
    sm = theory.draw(Task("sphere", 8, 16), 3000, 5)
    rho = 1e4
    slope = rho * (
        theory.looped_loss(sm, rho, 3) - theory.power_method_loss(sm, 3).value
    )
    assert math.isclose(slope, theory.c_L(sm, 3).value, rel_tol=1e-2)


def test_no_ln_dynamics_converge_to_gamma_star():
    F = dynamics.no_ln_F(5.875, 0.66, 16)
    _, w, v = dynamics.run(F, 0.0, 1.0, 0.1, 400)
    assert abs(w[-1] * v[-1] - 0.66) < 1e-8


def test_table_fast_path_equals_calling_the_table():
    tab = dynamics.looped_table(
        theory.draw(Task("sphere", 8, 16), 2000, 6), 3, points=300
    )
    rec = [0, 5, 777, 5000]
    t1, w1, v1 = dynamics.run(tab, 0.0, 1.0, 0.1, 5000, rec)
    t2, w2, v2 = dynamics.run(lambda r: tab(r), 0.0, 1.0, 0.1, 5000, rec)
    assert t1.tolist() == t2.tolist() == rec
    np.testing.assert_allclose(w1, w2, rtol=1e-13)
    np.testing.assert_allclose(v1, v2, rtol=1e-13)
    # steps outside 0..steps are not recorded; every step is recorded by
    # default
    assert dynamics.run(tab, 0.0, 1.0, 0.1, 10, [-1, 3, 11])[0].tolist() == [3]
    assert dynamics.run(tab, 0.0, 1.0, 0.1, 10)[0].tolist() == list(range(11))


def test_diverging_dynamics_name_the_step():
    F = dynamics.no_ln_F(5.875, 0.66, 16)
    with pytest.raises(FloatingPointError, match="diverged at step"):
        dynamics.run(F, 0.0, 1.0, 40.0, 10_000, [10_000])


def test_integer_power_matches_numpy():
    x = np.random.default_rng(0).uniform(0.1, 1.5, (7, 5))
    for k in (1, 2, 3, 20, 33):
        np.testing.assert_allclose(theory._ipow(x, k), x**k, rtol=1e-13)


def test_descent_lemma_is_the_exact_loss_change():
    lemma = appendix_b.descent_lemma()
    k2, g_star, d, eta, Q, g = 5.875, 0.66, 16, 0.1, 1.7, 0.2
    F = 2 * k2 / d * (g - g_star)
    g_next = g - eta * Q * F + eta**2 * g * F**2
    exact = k2 * ((g_next - g_star) ** 2 - (g - g_star) ** 2)
    sym = {s.name: s for s in lemma["change"].free_symbols}
    value = lemma["change"].subs(
        {
            sym["kappa2"]: k2,
            sym["d"]: d,
            sym["eta"]: eta,
            sym["F"]: F,
            sym["gamma"]: g,
            sym["Q"]: Q,
        }
    )
    assert math.isclose(float(value), exact, rel_tol=1e-12)
    assert lemma["ratio_max"] < 0.5


def test_symbolic_identities():
    names = symbolic.verify_all()  # each derivation asserts what it derives
    assert {n.split(".")[0] for n in names} == set(symbolic.APPENDICES)
    assert (
        "appendix_b.descent_lemma" in names
        and "appendix_c.cube_increment" in names
    )
    g = appendix_b.no_ln_landscape("unnormalized")["gamma_star"]
    assert (g - (1 - common.k1 / common.k2)).simplify() == 0


def test_reduced_adam_is_torch_adam():
    """dynamics.run_adam is torch.optim.Adam on (w, v) for the loss (wv -
    1)^2 / 2, whose F(rho) = rho - 1."""
    import torch

    t, w, v = dynamics.run_adam(lambda r: r - 1.0, 0.0, 1.0, 0.01, 50, [50])
    p = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.01)
    for _ in range(50):
        opt.zero_grad()
        (0.5 * (p[0] * p[1] - 1) ** 2).backward()
        opt.step()
    assert t.tolist() == [50]
    np.testing.assert_allclose([w[0], v[0]], p.detach().numpy(), rtol=1e-12)


def test_draw_is_shared_and_read_only():
    """The same draw twice is one Sample (kept in memory), and nobody can
    change it."""
    task = Task("sphere", 4, 8)
    first, again = theory.draw(task, 300, 11), theory.draw(task, 300, 11)
    assert first is again and theory.draw(task, 300, 12) is not first
    with pytest.raises(ValueError, match="read-only"):
        first.lam[0, 0] = 0.0
    c2 = np.full((2, 4), 0.25)
    theory.Sample.from_spectrum(task, np.ones((2, 4)), c2)
    c2[0, 0] = 1.0  # the caller's array stays writable


def test_draws_and_reduced_runs_are_stored_once(tmp_path, monkeypatch):
    """A Task 1 draw, a table of F and a run on it are computed once and
    then read from the disk cache (another process sees the same numbers);
    ``cache=False`` stores nothing, and another seed is another entry."""
    from lnpower import cache

    task = Task("sphere", 4, 8)
    first = theory.draw(task, 500, 21, cache=tmp_path)
    tab = dynamics.ln_layer_table(first, points=200, cache=tmp_path)
    run = dynamics.run(tab, 0.0, 1.0, 0.1, 3000, [10, 3000], cache=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "draw",
        "dynamics",
        "table",
    ]
    (entry,) = (tmp_path / "draw").iterdir()  # a key a reader can follow
    assert entry.name.startswith("task=sphere,d=4,n=8,samples=500,seed=21,")
    theory.draw.cache_clear()  # as in a fresh process

    def fail(*args):
        raise AssertionError("recomputed instead of read from the cache")

    monkeypatch.setattr(theory, "_spectra", fail)
    again = theory.draw(task, 500, 21, cache=tmp_path)
    assert again is not first and np.array_equal(again.lam, first.lam)
    assert again.data_hash == first.data_hash
    tab2 = dynamics.Table.build(
        fail,
        points=200,
        cache=tmp_path,
        key=dict(
            model="ln_layer",
            task="sphere",
            d=4,
            n=8,
            sample=again.data_hash,
        ),
    )
    assert tab2.logF == tab.logF and tab2.slope == tab.slope
    run2 = dynamics.run(tab2, 0.0, 1.0, 0.1, 3000, [10, 3000], cache=tmp_path)
    assert all(np.array_equal(a, b) for a, b in zip(run, run2))
    with pytest.raises(AssertionError, match="recomputed"):
        theory.draw(task, 500, 22, cache=tmp_path)
    monkeypatch.undo()
    before = len(list(tmp_path.rglob("*")))
    other = theory.draw(task, 500, 22, cache=False)
    assert (
        len(list(tmp_path.rglob("*"))) == before
        and other.data_hash != first.data_hash
    )
    assert cache.data_hash(first.lam) != cache.data_hash(first.lam.T)


def test_divergence_threshold_separates_convergence_from_divergence():
    """eta_div of the no-LN recursion (d = 8, exact moments): the
    recursion reaches gamma* just below it and not just above."""
    from lnpower import saddle
    from lnpower.tasks import Task

    k = theory.kappas_exact(Task("sphere", 8, 16))
    g = 1 - k["kappa1"] / k["kappa2"]
    eta = saddle.divergence_threshold(k["kappa2"], g, 8)
    assert abs(eta - 1.06) < 0.02
    F = dynamics.no_ln_F(k["kappa2"], g, 8)
    _, w, v = dynamics.run(F, 0.0, 1.0, 0.99 * eta, 500)
    assert abs(w[-1] * v[-1] / g - 1) < 1e-6
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            _, w, v = dynamics.run(F, 0.0, 1.0, 1.01 * eta, 500)
            assert not abs(w[-1] * v[-1] / g - 1) < 1e-6
        except FloatingPointError:
            pass
