"""Sweeps on dask.distributed: the same numbers as training directly, a
killed sweep resumed without redoing its finished runs, a failing run that
loses nothing else, and the refusals up front."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from helpers import TINY_RUN

from lnpower import sweep, train
from lnpower.sweep import is_cached
from lnpower.train import fit


def test_sweep_on_two_workers_equals_training_directly(tmp_path, monkeypatch):
    cs = sweep.grid(
        {"lr": [0.05, 0.1], "norm": ["layernorm", "none"]},
        seeds=(0, 1),
        **TINY_RUN,
    )
    out = sweep.run(
        cs, workers=2, group_size=3, cache=tmp_path, progress=False
    )
    assert all(is_cached(c, tmp_path) for c in cs)
    for c, h in zip(cs, out):
        alone = fit(c, progress=False)  # in this process, no cache
        assert np.array_equal(alone.w, h.w) and np.array_equal(
            alone.test_loss, h.test_loss
        )
        assert np.array_equal(alone.W.numpy(), h.W.numpy())
    # and fit() reads the sweep's runs from the cache, training nothing
    monkeypatch.setattr(train, "_train", lambda *a: 1 / 0)
    for c, h in zip(cs, out):
        assert fit(c, cache=tmp_path).train_loss == h.train_loss


def test_a_failing_run_loses_nothing_else(tmp_path):
    # without LN a huge step diverges: the worker raises TrainingDiverged
    cs = sweep.grid({"lr": [0.1, 1e6]}, seeds=(0, 1), **TINY_RUN, norm="none")
    out = sweep.run(cs, workers=1, cache=tmp_path, progress=False)
    rows = [sweep.row(c, h) for c, h in zip(cs, out)]
    assert [r["status"] for r in rows] == ["ok", "ok", "failed", "failed"]
    assert all("diverged" in r["error"] for r in rows[2:])
    assert is_cached(cs[0], tmp_path) and not is_cached(cs[2], tmp_path)
    table = sweep.write_table(rows, tmp_path / "t.csv").read_text()
    assert table.count("\n") == 5 and "failed" in table


def _entries(folder):
    return {
        p.name: p.stat().st_mtime_ns
        for p in folder.glob("fit/*")
        if (p / "done").exists()
    }


def test_a_killed_sweep_resumes_without_redoing_finished_runs(tmp_path):
    cache = tmp_path / "cache"
    cmd = [
        sys.executable,
        "-m",
        "lnpower",
        "sweep",
        "--grid",
        "lr=0.02,0.04,0.06,0.08,0.1,0.12",
        "--seeds",
        "0,1",
        "--workers",
        "1",
        "--group",
        "1",
        "--out",
        str(tmp_path / "t.csv"),
    ]
    cmd += [f"--set={k}={v}" for k, v in TINY_RUN.items() if k != "steps"]
    cmd += ["--set=steps=400"]
    env = {**os.environ, "LNPOWER_CACHE": str(cache)}
    p = subprocess.Popen(
        cmd,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while len(_entries(cache)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait()
    before = _entries(cache)
    assert 2 <= len(before) < 12, "the sweep was not killed midway"
    done = subprocess.run(
        cmd + ["--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    after = _entries(cache)
    assert len(after) == 12
    assert {k: after[k] for k in before} == before  # not trained again


def test_sweep_refuses_what_cannot_fit_in_memory(capsys):
    from lnpower.cli import main

    code = main(
        [
            "sweep",
            "--grid",
            "seed=0,1",
            "--set",
            "train_size=300000000",
            "--out",
            "/tmp/lnpower-x.csv",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "sweep needs about" in err and "GiB" in err
    assert err.count("\n") == 1  # one line
    assert not os.path.exists("/tmp/lnpower-x.csv")


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--grid", "colour=1,2"], "'colour' is not a TrainConfig field"),
        (["--grid", "lr=fast"], "lr='fast': expected a float"),
        (["--grid", "lr"], "expected FIELD=VALUE"),
        (["--grid", "norm=nonsense"], "norm"),
        ([], "at least one --grid"),
    ],
)
def test_sweep_options_are_checked_before_any_work(argv, match):
    with pytest.raises(ValueError, match=match):
        axes = [argv[i + 1] for i, a in enumerate(argv) if a == "--grid"]
        sweep.from_options(axes, [], (0,))


def test_the_where_grid_and_its_stored_table(monkeypatch):
    """The chapter where's grid: 360 runs (90 in the subset), each of one
    set-up; its stored table matches the code of now (else: `python -m
    lnpower stored-runs --name where` from the checkout's root, with
    PYTHONPATH=lib), with one row a run."""
    from lnpower.chapters import where

    monkeypatch.delenv("LNPOWER_SEED", raising=False)
    full, sub = where.configs(True), where.configs(False)
    assert len(full) == 360 and len(sub) == 90
    assert {str(c) for c in sub} <= {str(c) for c in full}
    assert [where.setup_of(c) for c in full].count("looped") == 120
    (d, n), (d2, n2) = where.points()[0], where.points()[-1]
    assert (d, n) == (4, 2) and (d2, n2) == (32, 256)
    rows = where.stored()
    assert rows is not None, (
        "stale: PYTHONPATH=lib python -m lnpower stored-runs --name where"
    )
    assert len(rows) == 360
    assert {
        (r["setup"], r["d"], r["n"], r["lr"], r["seed"]) for r in rows
    } == {(where.setup_of(c), c.d, c.n, c.lr, c.seed) for c in full}
    monkeypatch.setenv("LNPOWER_SEED", "1")  # other draws: not these rows
    assert where.stored() is None


def test_the_sweep_command_reports_each_failure_on_its_line(
    tmp_path, capsys, monkeypatch
):
    from lnpower.cli import main

    monkeypatch.setenv("LNPOWER_CACHE", str(tmp_path / "cache"))
    sets = [f"--set={k}={v}" for k, v in TINY_RUN.items()]
    sets.append("--set=norm=none")
    out = tmp_path / "t.csv"
    code = main(
        [
            "sweep",
            "--grid",
            "lr=0.1,1e6",
            "--workers",
            "1",
            "--out",
            str(out),
            *sets,
        ]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and "2 runs, 1 failed" in lines[-2]
    assert (
        lines[-1].startswith("failed: TrainingDiverged")
        and "1000000" in (lines[-1])
    )
    assert out.read_text().count("\n") == 3


def test_an_unreachable_scheduler_is_one_line_and_status_2(tmp_path):
    """``sweep --scheduler`` where no scheduler listens: one line naming
    the address, exit status 2, no traceback."""
    import os

    address = "tcp://127.0.0.1:9"  # the discard port: nothing answers
    sets = [f"--set={k}={v}" for k, v in TINY_RUN.items()]
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
    r = subprocess.run(
        [sys.executable, "-m", "lnpower", "sweep", "--grid", "lr=0.1",
         *sets, "--scheduler", address, "--out", str(tmp_path / "t.csv")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert address in lines[0] and "Traceback" not in r.stderr


def test_the_where_table_keeps_through_training_code_changes(monkeypatch):
    """The stored where table is keyed by the runs' keys (their numbers
    version) and the code that makes rows: a change to the training code or
    a new normalisation keeps it, a change to the theory does not."""
    from lnpower import cache
    from lnpower.chapters import where

    before = where.table_key()
    code = cache._code

    def changed(module):  # a module's code, as if edited
        return lambda m: code(m) + (b"#" if m == module else b"")

    for module in ("engine", "norms/_rmsnorm", "train"):
        monkeypatch.setattr(cache, "_code", changed(module))
        assert where.table_key() == before, module
    monkeypatch.setattr(cache, "_code", changed("theory"))
    assert where.table_key()["rows"] != before["rows"]
