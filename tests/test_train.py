"""SGD training (§5): structure, determinism, batching, errors, agreement
with the theory."""

import numpy as np
import pytest
import torch

from lnpower import dynamics, engine, model, theory
from lnpower.config import TrainConfig
from lnpower.history import History
from lnpower.tasks import Task, embed, targets
from lnpower.train import TrainingDiverged, fit, fit_many

SMALL = dict(
    d=6, n=12, batch=16, steps=30, train_size=200, test_size=100, log_points=5
)


@pytest.mark.parametrize(
    "kw",
    [
        dict(model="layer", target="normalized"),
        dict(model="looped", loops=3, target="subspace"),
    ],
)
def test_zero_blocks_stay_zero(kw):
    h = fit(TrainConfig(**SMALL, **kw, dtype="float64"))
    for W, V in h.snapshots.values():
        for blk in ("11", "21", "22"):
            assert model.blocks(W)[blk].abs().max().item() == 0.0
        for blk in ("11", "12", "22"):
            assert model.blocks(V)[blk].abs().max().item() == 0.0
    assert h.w[-1] > 0 and h.train_loss[-1] < h.train_loss[0]


def test_same_seed_same_history(tmp_path):
    c = TrainConfig(**SMALL, model="looped", loops=2, target="subspace")
    h1, h2 = fit(c), fit(c)
    assert (
        h1.train_loss == h2.train_loss
        and h1.w == h2.w
        and h1.batch_loss == h2.batch_loss
    )
    h3 = History.load(h1.save(tmp_path / "run"))
    assert (
        h3.train_loss == h1.train_loss
        and torch.equal(h3.W, h1.W)
        and h3.config == h1.config
    )
    assert (
        fit(
            TrainConfig(
                **{**SMALL, "seed": 1},
                model="looped",
                loops=2,
                target="subspace",
            )
        ).train_loss
        != h1.train_loss
    )


def test_batched_equals_sequential():
    cs = [
        TrainConfig(
            **{**SMALL, "seed": s}, lr=lr, init_scale=0.05, dtype="float64"
        )
        for s, lr in ((0, 0.1), (1, 0.05))
    ]
    together = fit_many(cs)
    for c, h in zip(cs, together):
        alone = fit(c)
        np.testing.assert_allclose(h.train_loss, alone.train_loss, rtol=1e-10)
        np.testing.assert_allclose(h.w, alone.w, rtol=1e-10, atol=1e-14)


def test_divergence_names_step():
    with pytest.raises(
        TrainingDiverged, match=r"diverged at step \d+.*smaller learning rate"
    ):
        fit(TrainConfig(**SMALL, norm="none", target="unnormalized", lr=50.0))


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(lr=0.0), "lr"),
        (dict(lr=-1.0), "lr"),
        (dict(steps=0), "steps"),
        (dict(batch=0), "batch"),
        (dict(loops=0), "loops"),
        (dict(model="looped", loops=-2), "loops"),
        (dict(target="x"), "target"),
        (
            dict(device="cuda:7" if not torch.cuda.is_available() else "tpu"),
            "device",
        ),
        (dict(model="layer", loops=3), "layer"),
        (dict(task="rotated", m=(1, 1)), "all entries"),
    ],
)
def test_bad_config(kw, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kw)


def _structured_gradient(K, seed, alpha=0.4, beta=1.3, d=6):
    task = Task("sphere", d, 2 * d)
    X, a = task.sample(K, torch.Generator().manual_seed(seed))
    E, Y = embed(X, a)[None], targets(X, a, "normalized")[None]
    W, V = model.structured(d, alpha, beta)
    _, gW, gV = engine.Model(1, "layernorm", "normalized").loss_and_grad(
        E, Y, W[None], V[None]
    )
    lam, vec = torch.linalg.eigh(X @ X.mT)
    sm = theory.Sample.from_spectrum(
        task,
        lam.flip(-1).numpy(),
        ((vec.flip(-1).mT @ a.unsqueeze(-1))[..., 0] ** 2).numpy(),
    )
    F = theory.ln_layer_dloss(sm, alpha * beta) / d
    G12, G21 = model.blocks(gW[0])["12"], model.blocks(gV[0])["21"]
    off = (G12 - torch.diag(G12.diagonal())).pow(2).mean().sqrt() / abs(
        F * beta
    )
    return F, G12, G21, off.item()


def test_gradient_matches_reduced_F():
    """Autograd on the full model at a structured point agrees with the
    reduced recursion: the mean diagonal of the W12 (V21) gradient is
    F(gamma) v (F(gamma) w), F = L'(gamma)/d on the same sample, exactly;
    the off-diagonal part is sampling noise that shrinks like K^{-1/2}, so
    the population gradient is F v I (Schur's lemma)."""
    F, G12, G21, off_small = _structured_gradient(1000, 7)
    assert abs(G12.diagonal().mean().item() / (F * 1.3) - 1) < 1e-10
    assert abs(G21.diagonal().mean().item() / (F * 0.4) - 1) < 1e-10
    *_, off_large = _structured_gradient(16000, 8)
    assert off_large < 0.5 * off_small, (off_small, off_large)


def test_sgd_gamma_matches_population_dynamics():
    """LN layer, Task 1, d=16, n=32, eta=0.1, batch 128, v0=1: gamma_2000
    within 2 %."""
    h = fit(TrainConfig(steps=2000, log_points=3))
    tab = dynamics.ln_layer_table(theory.draw(Task(), 20_000, 1), points=1500)
    _, w, v = dynamics.run(tab, 0.0, 1.0, 0.1, 2000, [2000])
    g_pop, g_sgd = float(w[-1] * v[-1]), float(h.product[-1])
    assert abs(g_sgd / g_pop - 1) < 0.02, (g_sgd, g_pop)
    assert 1.5 < g_pop < 1.6


def test_cache_returns_identical_history(tmp_path):
    c = TrainConfig(**SMALL)
    h1 = fit(c, cache=tmp_path)
    h2 = fit(c, cache=tmp_path)
    assert (
        h1.train_loss == h2.train_loss
        and h1.w == h2.w
        and torch.equal(h1.V, h2.V)
    )
    assert len(list((tmp_path / "fit").iterdir())) == 1
    h3 = fit(TrainConfig(**{**SMALL, "seed": 5}), cache=tmp_path)
    assert h3.train_loss != h1.train_loss
    keys = sorted(p.name for p in (tmp_path / "fit").iterdir())
    assert len(keys) == 2 and sum(",seed=5," in k for k in keys) == 1


def test_adam_matches_torch_optim_adam():
    """fit's Adam is torch.optim.Adam: the same batches through autograd
    (lnbook.bench's naive model) and torch.optim.Adam give the same weights
    after 30 steps."""
    from lnbook import bench

    from lnpower.tasks import generator
    from lnpower.train import dataset, initial_weights, seeds

    c = TrainConfig(
        **SMALL, optimizer="adam", lr=0.01, init_scale=0.05, dtype="float64"
    )
    h = fit(c)
    E, Y = dataset(c, "train")
    W0, V0 = initial_weights(c)
    W, V = W0.clone().requires_grad_(True), V0.clone().requires_grad_(True)
    opt = torch.optim.Adam([W, V], lr=c.lr)
    g = generator(seeds(c.seed)["batches"])
    for _ in range(c.steps):
        idx = torch.randint(c.train_size, (c.batch,), generator=g)
        opt.zero_grad()
        bench.naive_loss(
            E[idx], Y[idx], W, V, 1, "layernorm", c.target
        ).backward()
        opt.step()
    torch.testing.assert_close(h.W, W.detach(), rtol=1e-9, atol=1e-12)
    torch.testing.assert_close(h.V, V.detach(), rtol=1e-9, atol=1e-12)
    assert not torch.equal(
        h.W,
        fit(TrainConfig(**SMALL, lr=0.01, init_scale=0.05, dtype="float64")).W,
    )  # not SGD
    with pytest.raises(ValueError, match="optimizer"):
        TrainConfig(optimizer="rmsprop")


def test_variants_train_through_fit_and_learnable_rows_share_its_batches():
    """The study's fixed rows are fit's runs; a learnable gain starts at 1,
    so after one step of the same batch W and V are fit's (float64)."""
    from lnpower.chapters import beyond_training as variants

    c = TrainConfig(**{**SMALL, "steps": 1}, dtype="float64")
    fixed = variants.train_fixed("layernorm", c)
    assert abs(fixed["test_loss"] / fit(c).test_loss[-1] - 1) < 1e-12
    learn = variants.train_learnable("layernorm", c)
    for k in ("alpha", "beta"):
        assert abs(learn[k] - fixed[k]) < 1e-12
    assert ("maxabs", False) in variants.all_variants()
    with pytest.raises(ValueError, match="single layer"):
        variants.train_fixed(
            "layernorm",
            TrainConfig(**SMALL, model="looped", loops=2, target="subspace"),
        )


def test_cache_key_follows_the_code_not_the_docstrings(tmp_path):
    """A module's normalised code is remembered per version of the file: a
    docstring edit keeps it, a code edit changes it."""
    import os

    from lnpower.cache import _normalised

    f = tmp_path / "m.py"

    def version(text, stamp):
        f.write_text(text)
        os.utime(f, ns=(stamp, stamp))
        return _normalised(f, f.stat().st_mtime_ns)

    base = version('def g():\n    """one"""\n    return 1\n', 10**9)
    assert (
        version('def g():\n    """two"""\n    return 1\n', 2 * 10**9) == base
    )
    assert (
        version('def g():\n    """two"""\n    return 2\n', 3 * 10**9) != base
    )
