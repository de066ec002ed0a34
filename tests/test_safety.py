"""Nothing lost, nothing silent: output paths checked first, atomic writes,
memory refused up front, departures from the paper's assumptions named, the
paper's defaults per model."""

import json
from pathlib import Path

import pytest
import torch
from helpers import cli

import lnpower.train
from lnpower import cache, claims
from lnpower.cli import main
from lnpower.config import PAPER, TrainConfig
from lnpower.history import History
from lnpower.train import fit

TINY = [
    "--d",
    "4",
    "--n",
    "8",
    "--steps",
    "3",
    "--train-size",
    "40",
    "--test-size",
    "20",
    "--eval-size",
    "20",
    "--batch",
    "16",
]


def test_save_path_checked_before_training(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")

    def must_not_train(*a, **k):
        raise AssertionError(
            "training started before the output path was checked"
        )

    monkeypatch.setattr(lnpower.train, "fit", must_not_train)
    assert main(["train", *TINY, "--save", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert (
        "cannot write to" in err
        and str(blocker) in err
        and err.count("\n") == 1
    )


def test_history_save_is_atomic(tmp_path, monkeypatch):
    h = fit(
        TrainConfig(
            d=4, n=8, steps=3, train_size=40, test_size=20, eval_size=20
        )
    )
    path = h.save(tmp_path / "run")
    before = path.read_bytes()

    def half_written(obj, f):
        Path(f).write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", half_written)
    with pytest.raises(OSError, match="disk full"):
        h.save(tmp_path / "run")
    assert path.read_bytes() == before and History.load(path).w == h.w
    assert [p.name for p in path.parent.iterdir()] == [
        "history.pt"
    ]  # no temporary left


def test_interrupted_computation_leaves_no_cache_entry(tmp_path):
    def boom():
        raise KeyboardInterrupt

    save = lambda x, folder: (folder / "x").write_text(str(x))  # noqa: E731
    load = lambda folder: int((folder / "x").read_text())  # noqa: E731
    with pytest.raises(KeyboardInterrupt):
        cache.cached("t", "k", boom, save, load, tmp_path)
    assert [p.name for p in tmp_path.rglob("*")] == ["t"]  # the kind only
    assert cache.cached("t", "k", lambda: 7, save, load, tmp_path) == 7
    assert cache.cached("t", "k", boom, save, load, tmp_path) == 7  # stored


def test_a_stored_entry_is_never_replaced(tmp_path):
    """Two processes compute the same entry at once (two chapters side by
    side): the first to finish stores it; the second keeps it (a reader may
    be loading it) and only returns its own result."""
    save = lambda x, folder: (folder / "x").write_text(str(x))  # noqa: E731
    load = lambda folder: int((folder / "x").read_text())  # noqa: E731

    def slower():  # the other process stores its result while this computes
        assert cache.cached("t", "k2", lambda: 5, save, load, tmp_path) == 5
        return 6

    assert cache.cached("t", "k2", slower, save, load, tmp_path) == 6
    (entry,) = (tmp_path / "t").iterdir()
    assert load(entry) == 5 and (entry / "done").exists()
    assert cache.cached("t", "k2", lambda: 9, save, load, tmp_path) == 5


def test_theory_memory_refused_up_front(capsys):
    """A Monte Carlo request far too large fails in one line, before work."""
    from lnpower import theory
    from lnpower.tasks import Task

    task = Task("sphere", 16, 32)
    assert theory.memory_bytes(task, 200_000) < 2 * 2**30  # the book's
    with pytest.raises(MemoryError, match=r"need about [\d.]+ GiB"):
        theory.draw(task, 10**12, cache=None)
    assert main(["theory", "--samples", str(10**12)]) == 2
    err = capsys.readouterr().err
    assert "GiB" in err and "fewer samples" in err and err.count("\n") == 1


def test_memory_refused_up_front(monkeypatch, capsys):
    cfg = TrainConfig(train_size=10**9, steps=1)
    with pytest.raises(MemoryError, match=r"needs about [\d.]+ GiB"):
        fit(cfg)
    assert main(["train", "--train-size", str(10**9), "--steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "GiB" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args,names",
    [
        (("--d", "8", "--n", "8"), "(A3)"),
        (("--optimizer", "adam", "--lr", "0.01"), "gradient descent"),
        (("--v0", "0"), "initialisation"),
        (("--batch", "64"), "minibatch of 64 from a training set of 40"),
        (
            ("--model", "looped", "--loops", "2", "--target", "normalized"),
            "Theorem 4.1",
        ),
    ],
)
def test_departures_are_warned(args, names):
    base = (
        [a for a in TINY if a not in ("--d", "4", "--n", "8")]
        if "--d" in args
        else TINY
    )
    r = cli("train", *base, *args, "--json")
    assert r.returncode == 0, r.stderr
    assert "warning: these settings break" in r.stderr and names in r.stderr
    assert any(
        names in line
        for line in json.loads(r.stdout)["departures_from_the_paper"]
    )


def test_paper_settings_have_no_departures():
    r = cli("train", *TINY, "--json")
    assert r.returncode == 0 and "warning" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["departures_from_the_paper"] == []


def test_defaults_are_the_papers_per_model():
    tiny = TINY[:-2]  # the paper's batch of 128: a training set larger than it
    tiny[tiny.index("--train-size") + 1] = "200"
    r = cli("train", "--model", "looped", *tiny, "--json")
    config = json.loads(r.stdout)["config"]
    assert (config["loops"], config["target"]) == (10, "subspace")
    assert (config["lr"], config["batch"]) == (PAPER.lr, PAPER.batch)
    assert TrainConfig(model="layer").target == "normalized"
    help_text = " ".join(cli("train", "--help").stdout.split())
    assert "looped: 10" in help_text and "looped: subspace" in help_text


def test_cache_key_ignores_docstrings_and_layout(tmp_path, monkeypatch):
    """Editing prose or formatting keeps cached results; editing code does
    not."""
    (tmp_path / "m.py").write_text(
        '"""Doc."""\n\ndef f(x):\n    """Doc."""\n    return x + 1\n'
    )
    monkeypatch.setattr(cache, "HERE", tmp_path)
    k = cache.code_hash(("m",))
    (tmp_path / "m.py").write_text(
        '"""Other doc."""\n\n\ndef f(x):  # a comment\n'
        '    """Longer\n    doc."""\n    return (x + 1)\n'
    )
    assert cache.code_hash(("m",)) == k
    (tmp_path / "m.py").write_text("def f(x):\n    return x + 2\n")
    assert cache.code_hash(("m",)) != k


def test_claim_measured_once_per_code(tmp_path, monkeypatch):
    """A claim measured by a chapter and by the report is measured once (same
    code)."""
    from lnpower.chapters import with_ln

    calls = []

    def measure():
        calls.append(1)
        return 0.5, "reproduced", "a detail"

    monkeypatch.setattr(with_ln, "t_claim", measure, raising=False)
    fields = dict(zip(claims.FIELDS, ["t-claim", "thm-4-1", *"wsptb"]))
    claim = claims.Claim(
        **{**fields, "source": "book", "check": "with_ln.t_claim"}
    )
    monkeypatch.setitem(claims.ledger(), "t-claim", claim)
    first = claims.measure("t-claim", with_ln, cache=tmp_path)
    second = claims.measure("t-claim", with_ln, cache=tmp_path)
    assert len(calls) == 1 and first == second and second.measured == 0.5
    assert (
        (tmp_path / "claim")
        .iterdir()
        .__next__()
        .name.startswith("claim=t-claim,stored=")
    )
    claims.measure("t-claim", with_ln, cache=None)
    assert len(calls) == 2
