"""The command line and the stored notebooks."""

import json

import pytest
from helpers import ROOT
from helpers import cli as run


def test_theory_json_keys():
    args = "--task sphere --d 8 --n 16 --loops 3 --samples 2000 --json"
    r = run("theory", *args.split())
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for k in (
        "kappa1 kappa2 kappa3 gamma_star_normalized gamma_star_unnormalized "
        "irreducible_loss_normalized irreducible_loss_unnormalized upsilon3 "
        "C1 "
        "power_method_loss"
    ).split():
        assert isinstance(out[k], float), k


TINY = "--d 4 --n 8 --steps 5 --train-size 50 --test-size 20".split()


def test_train_json_keys():
    looped = "--model looped --loops 2 --target subspace".split()
    r = run("train", *looped, *TINY, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert {
        "final_train_loss",
        "final_test_loss",
        "seconds",
        "steps_per_second",
        "w",
        "v",
        "rho",
        "evaluation_seconds",
    } <= set(out)
    assert 0 < out["evaluation_seconds"] < out["seconds"]
    adam = run(
        "train",
        *TINY,
        "--optimizer",
        "adam",
        "--lr",
        "0.01",
        "--json",
    )
    assert adam.returncode == 0, adam.stderr
    assert json.loads(adam.stdout)["config"]["optimizer"] == "adam"


@pytest.mark.parametrize(
    "args,code,text",
    [
        (("theory", "--task", "rotated", "--m", "2,0,1"), 2, "m[1]"),
        (
            ("theory", "--task", "rotated", "--m", "2,2"),
            2,
            "all entries equal",
        ),
        (("train", "--lr", "-1"), 2, "lr"),
        (("train", "--steps", "0"), 2, "steps"),
        (("train", "--device", "quantum"), 2, "device"),
        (
            (
                "train",
                "--norm",
                "none",
                "--target",
                "unnormalized",
                "--lr",
                "80",
                "--d",
                "4",
                "--n",
                "8",
                "--steps",
                "50",
                "--train-size",
                "50",
                "--test-size",
                "10",
            ),
            3,
            "diverged",
        ),
    ],
)
def test_cli_errors(args, code, text):
    r = run(*args)
    assert r.returncode == code, (r.returncode, r.stderr)
    assert text in r.stderr and "Traceback" not in r.stderr


def test_notebooks_stored_without_outputs():
    nbs = sorted((ROOT / "book").glob("**/*.ipynb"))
    assert nbs, "the book has notebooks"
    for p in nbs:
        nb = json.loads(p.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                assert (
                    not cell["outputs"] and cell["execution_count"] is None
                ), p.name


def test_colab_cells_install_from_the_configured_repository(tmp_path):
    import shutil

    import nbformat
    from lnbook import colab

    url, branch = colab.repository(ROOT / "_config.yml")
    for p in sorted((ROOT / "book").glob("*.ipynb")):
        assert colab.installed_from(nbformat.read(p, as_version=4)) == (
            url,
            branch,
        ), p.name
    # a fork: change the URL in a copy of the config, sync, and every chapter
    # follows
    book = tmp_path / "book"
    shutil.copytree(ROOT / "book", book)
    config = tmp_path / "_config.yml"
    config.write_text(
        (ROOT / "_config.yml")
        .read_text()
        .replace(url, "https://example.org/fork")
    )
    changed = colab.sync(book, config)
    assert len(changed) == len(list(book.glob("*.ipynb")))
    for p in changed:
        assert (
            colab.installed_from(nbformat.read(p, as_version=4))[0]
            == "https://example.org/fork"
        )
