"""Samplers (§3.1) and the layer (§3.2)."""

import pytest
import torch

from lnpower import inference, model, tasks
from lnpower.tasks import Task, generator


def test_unit_columns_and_haar():
    X, a = Task("sphere", 8, 20).sample(50, generator(0))
    tasks.check_unit_columns(X)
    assert torch.allclose(a.norm(dim=-1), torch.ones(50, dtype=a.dtype))
    P = tasks.haar(20, 6, generator(1))
    assert torch.allclose(
        P @ P.mT, torch.eye(6, dtype=P.dtype).expand(20, 6, 6), atol=1e-12
    )
    with pytest.raises(ValueError, match=r"\(A1\)"):
        tasks.check_unit_columns(2 * X)


def test_task2_spectrum_equals_m():
    task = Task("rotated", 16, 32)
    assert task.m == (3,) + (2,) * 14 + (1,)
    X, _ = task.sample(10, generator(2))
    lam, _ = tasks.spectrum(X)
    m = torch.tensor(task.m, dtype=lam.dtype).expand_as(lam)
    assert torch.allclose(lam, m, atol=1e-10)


@pytest.mark.parametrize(
    "d,n,expected", [(8, 16, (3, 2, 2, 2, 2, 2, 2, 1)), (4, 7, (3, 2, 1, 1))]
)
def test_default_multiplicities(d, n, expected):
    m = tasks.default_multiplicities(d, n)
    assert m == expected and sum(m) == n and len(set(m[:2])) == 2


def test_rotation_invariance_test_can_tell():
    """(A2): an invariant statistic (a^T S a) keeps its mean under a fixed
    rotation; a non-invariant one (first row's mean square under an
    anisotropic sampler) does not."""
    g = generator(3)
    Q = tasks.haar(1, 8, g)[0]
    X, a = Task("sphere", 8, 16).sample(20000, g)

    def z(x, y):
        return (x.mean() - y.mean()).abs() / (
            x.var() / len(x) + y.var() / len(y)
        ).sqrt()

    def q(M):
        return (a.unsqueeze(-2) @ M @ M.mT @ a.unsqueeze(-1)).flatten()

    assert z(q(X), q(Q @ X)) < 4
    Y = tasks.anisotropic(20000, 8, 16, g)
    first_row = lambda M: (M[:, 0] ** 2).mean(-1)  # noqa: E731
    assert z(first_row(Y), first_row(Q @ Y)) > 10


def test_structured_layer_is_shifted_power_step():
    X, a = Task("sphere", 6, 12).sample(4, generator(4))
    E = tasks.embed(X, a)
    for rho in (0.3, 2.0):
        W, V = model.structured(6, rho, 1.0)
        y = model.output(model.layer(E, W, V))
        h = a + rho * (X @ X.mT @ a.unsqueeze(-1))[..., 0]
        assert torch.allclose(y, h / h.norm(dim=-1, keepdim=True), atol=1e-12)
        assert torch.allclose(
            model.layer(E, W, V)[..., :6, :12], X, atol=1e-12
        )
    # rho -> infinity: the power method step Sa/||Sa||, and L loops = L power
    # iterations
    W, V = model.structured(6, 1e7, 1.0)
    ys = [model.output(e) for e in model.looped(E, W, V, 5, return_all=True)]
    pm = inference.power_method(X, a, 5)
    assert all(torch.allclose(y, p, atol=1e-5) for y, p in zip(ys, pm))


def test_projector_multiplicity():
    X = Task("rotated", m=(2, 2, 1)).sample_X(1, generator(5))
    P, r = tasks.principal_projector(X)
    assert r.item() == 2 and torch.allclose(P @ P, P, atol=1e-10)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(name="rotated", m=(2, 0, 1)), "m\\[1\\]"),
        (dict(name="rotated", m=(2, 2, 2)), "all entries equal"),
        (dict(name="rotated", d=16, n=16), "n > d"),
        (dict(name="sphere", d=0), "d must be"),
        (dict(name="sphere", n=-3), "n must be"),
        (dict(name="cube"), "task must be"),
    ],
)
def test_bad_tasks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Task(**kwargs)


def test_bad_sums_and_nan():
    with pytest.raises(ValueError, match="sum"):
        tasks.check_multiplicities((3, 2, 1), n=7)
    with pytest.raises(ValueError, match="NaN"):
        tasks.check_unit_columns(torch.full((3, 4), float("nan")))


@pytest.mark.parametrize("L", [1, 2, 5])
@pytest.mark.parametrize("ln", [True, False])
def test_predict_is_the_last_column_of_looped(L, ln):
    """predict computes only the last column in its last loop; it must equal
    output(looped)."""
    X, a = Task("sphere", 5, 9).sample(7, generator(3))
    E = tasks.embed(X, a)
    g = generator(4)
    W, V = (
        0.3 * torch.randn(10, 10, generator=g, dtype=torch.float64)
        for _ in range(2)
    )
    norm = "layernorm" if ln else None
    full = model.output(model.looped(E, W, V, L, norm))
    torch.testing.assert_close(
        model.predict(E, W, V, L, norm), full, rtol=1e-12, atol=1e-12
    )
