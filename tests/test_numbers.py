"""The numbers version of the training code (``lnpower.train.NUMBERS``),
which every run's key carries instead of a hash of the code: small runs of
every code path (each normalisation, both targets of the layer, the looped
model, Adam, passes without replacement, a random start), in float64, and
every default of ``TrainConfig``, recorded in ``numbers.json`` under the
version that produced them. A change of the training code or of a default
that moves any of these numbers fails here until ``NUMBERS`` is raised and
the record written again (``LNPOWER_RECORD_NUMBERS=1 pytest
tests/test_numbers.py``); then every cached and stored run is trained
again, as it must be."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest

from lnpower import norms, train
from lnpower.config import TrainConfig

RECORD = Path(__file__).with_name("numbers.json")
BASE = dict(
    d=4, n=8, batch=16, steps=40, train_size=200, test_size=50, eval_size=50,
    log_points=4, dtype="float64",
)  # fmt: skip
RUNS = {
    "layer": {},
    "no-ln-normalized": {"norm": "none"},
    "no-ln-unnormalized": {"norm": "none", "target": "unnormalized"},
    "rotated": {"task": "rotated", "n": 12},
    "looped": {"model": "looped", "loops": 3},
    # every normalisation of the library (a new one fails until recorded)
    **{k: {"norm": k} for k in norms.NORMS if k != "layernorm"},
    "adam": {"optimizer": "adam", "lr": 0.01},
    "epochs": {"sampling": "epochs"},
    "random-start": {"init_scale": 0.05, "v0": 0.0, "seed": 3},
}


def measure() -> dict[str, list[float]]:
    """Each run's final w, v, training and test loss and summed minibatch
    loss."""
    out = {}
    for name, kw in RUNS.items():
        h = train.fit(TrainConfig(**{**BASE, **kw}), cache=False)
        out[name] = [
            h.w[-1], h.v[-1], h.train_loss[-1], h.test_loss[-1],
            float(np.sum(h.batch_loss)),
        ]  # fmt: skip
    return out


def defaults() -> dict:
    return {
        model: dataclasses.asdict(TrainConfig(model=model))
        for model in ("layer", "looped")
    }


@pytest.mark.skipif(
    not os.environ.get("LNPOWER_RECORD_NUMBERS"), reason="records only"
)
def test_record():
    RECORD.write_text(
        json.dumps(
            {
                "numbers": train.NUMBERS,
                "defaults": defaults(),
                "runs": measure(),
            },
            indent=1,
        )
        + "\n"
    )


def test_the_numbers_are_those_of_their_version(monkeypatch):
    monkeypatch.delenv("LNPOWER_SEED", raising=False)
    rec = json.loads(RECORD.read_text())
    assert rec["numbers"] == train.NUMBERS, (
        "NUMBERS changed: record the numbers of the new version "
        "(LNPOWER_RECORD_NUMBERS=1 pytest tests/test_numbers.py)"
    )
    now = defaults()
    for model, fields in rec["defaults"].items():  # new fields may be added
        changed = {
            k: (v, now[model][k])
            for k, v in fields.items()
            if json.loads(json.dumps(now[model][k])) != v
        }
        assert changed == {}, (
            f"a default of TrainConfig changed ({changed}): raise "
            "lnpower.train.NUMBERS"
        )
    assert set(rec["runs"]) == set(RUNS), "record the numbers of new runs"
    got = measure()
    for name, want in rec["runs"].items():
        # float64; the tolerance only absorbs summation orders that differ
        # between machines (about 1e-14)
        np.testing.assert_allclose(
            got[name], want, rtol=1e-9, err_msg=f"{name}: raise NUMBERS"
        )


def test_a_key_names_one_configuration():
    """Two configurations have the same run key only if they are the same
    run: every field, each model's own defaults (L, the target) included."""
    from itertools import combinations

    configs = [
        TrainConfig(),
        TrainConfig(model="looped"),
        TrainConfig(model="looped", loops=3),
        TrainConfig(model="looped", target="normalized"),
        TrainConfig(target="unnormalized"),
        TrainConfig(norm="none"),
        TrainConfig(task="rotated"),
        TrainConfig(d=8, n=16),
        TrainConfig(snapshot_steps=(100, 300)),
        TrainConfig(model="looped", snapshot_steps=(100, 300)),
        TrainConfig(sampling="epochs", steps=156_000),
        TrainConfig(seed=1),
        TrainConfig(lr=0.05),
        TrainConfig(dtype="float64"),
    ]
    for a, b in combinations(configs, 2):
        same = dataclasses.asdict(a) == dataclasses.asdict(b)
        assert (train.run_key(a) == train.run_key(b)) == same, (a, b)
    assert "model=looped" in train.run_key(TrainConfig(model="looped"))
    assert "loops" not in train.run_key(TrainConfig(model="looped"))
