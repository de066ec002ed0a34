"""The normalisations of lnpower.norms: what each computes, that a
registered one reaches the config, the model and the engine, and that a
run's key carries the source of a normalisation registered from outside
the library."""

import pytest
import torch
from helpers import TINY_RUN

from lnpower import norms, train
from lnpower.config import TrainConfig
from lnpower.tasks import generator

Z = torch.randn(3, 8, 5, generator=generator(0), dtype=torch.float64)
ONES = torch.ones(3, 1, 5, dtype=torch.float64)


def _col_norm(Y):
    return Y.norm(dim=-2, keepdim=True)


def test_layernorm_gives_unit_columns():
    torch.testing.assert_close(_col_norm(norms.get("layernorm")(Z)), ONES)
    assert norms.layernorm is norms.get("layernorm").apply


def test_rmsnorm_gives_columns_of_norm_sqrt_features():
    torch.testing.assert_close(
        _col_norm(norms.get("rmsnorm")(Z)), 8**0.5 * ONES
    )


def test_centered_has_zero_mean_and_unit_variance():
    Y = norms.get("centered")(Z)
    torch.testing.assert_close(Y.mean(-2), torch.zeros(3, 5).double())
    var = Y.pow(2).mean(-2)
    torch.testing.assert_close(
        var, torch.ones(3, 5).double(), rtol=1e-4, atol=0
    )


def test_maxabs_puts_the_largest_entry_at_one():
    Y = norms.get("maxabs")(Z)
    torch.testing.assert_close(Y.abs().amax(-2), torch.ones(3, 5).double())
    torch.testing.assert_close(Y * Z.abs().amax(-2, keepdim=True), Z)


@pytest.mark.parametrize("name", list(norms.NORMS))
def test_every_norm_acts_column_by_column(name):
    """Scaling one column changes no other column of the output: what lets
    the model compute the last loop's last column only."""
    f = norms.get(name)
    Z2 = Z.clone()
    Z2[..., 0] *= 3.0
    torch.testing.assert_close(f(Z2)[..., 1:], f(Z)[..., 1:])


def test_unknown_norm_is_refused_by_name():
    with pytest.raises(ValueError, match="norm must be 'none' or one of"):
        TrainConfig(norm="batchnorm")
    with pytest.raises(ValueError, match="cannot name"):
        norms.register("none", lambda Z, dim: Z)


def test_a_registered_function_trains_and_keys_its_own_code():
    """A normalisation registered from outside the library trains through
    fit (engine gradients by autograd) and enters the run's key by a hash of
    its source; the library's own runs keep their keys."""
    base = TrainConfig(**{**TINY_RUN, "steps": 5})
    before = train.run_key(base)
    norms.register(
        "halved", lambda Z, dim: 0.5 * norms.get("layernorm")(Z, dim)
    )
    try:
        c = TrainConfig(**{**TINY_RUN, "norm": "halved", "steps": 5})
        h = train.fit(c, progress=False, cache=False)
        assert len(h.test_loss) > 1 and all(
            map(torch.isfinite, torch.tensor(h.test_loss))
        )
        assert ",norm=halved," in train.run_key(c)
        assert ",norm_code=" in train.run_key(c)
        assert train.run_key(base) == before
    finally:
        norms.NORMS.pop("halved")
