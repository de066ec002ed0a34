"""One version, and extras that name what the book and the tests use."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import lnpower

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _names(requirements) -> set[str]:
    return {
        re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower().replace("_", "-")
        for r in requirements
    }


def test_one_version():
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert version("lnpower") == lnpower.__version__


def test_book_extra_has_every_sphinx_extension_the_config_loads():
    config = (ROOT / "_config.yml").read_text()
    block = config.split("extra_extensions:")[1].split("config:")[0]
    exts = {e.strip("- ").strip() for e in block.splitlines() if e.strip()}
    wanted = {e.replace("_", "-") for e in exts if not e.startswith("sphinx.")}
    assert wanted <= _names(
        PYPROJECT["project"]["optional-dependencies"]["book"]
    )


def test_test_extra_has_what_make_test_runs():
    have = _names(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert {
        "pytest",
        "pytest-xdist",
        "nbval",
        "ruff",
        "otter-grader",
        "playwright",
        "nbclient",
    } <= have


def test_every_line_fits_the_rendered_column():
    """79 columns for the library, the tests and the notebooks' code, so that
    ``lnpower.book.display.source`` can show any function under the sentence
    it implements (ruff's E501 checks the same, but exempts some lines)."""
    import json

    wide = []
    files = [
        *(ROOT / "lib").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "_ext").rglob("*.py"),
    ]
    for f in files:
        wide += [
            f"{f.name}:{i}"
            for i, line in enumerate(f.read_text().splitlines(), 1)
            if len(line) > 79
        ]
    for nb in (ROOT / "book").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                wide += [
                    nb.name
                    for line in "".join(cell["source"]).split("\n")
                    if len(line) > 79
                ]
    assert wide == []


def test_source_can_show_every_library_module():
    import importlib
    import pkgutil

    from lnpower.book.display import source

    names = [
        m.name for m in pkgutil.walk_packages(lnpower.__path__, "lnpower.")
    ]
    assert len(names) > 40
    for name in names:
        source(importlib.import_module(name))


# modules the training code imports that do not change its numbers
BOOKKEEPING = {
    "cache",
    "codegraph",
    "history",
    "progress",
    "machine",
    "assumptions",
}


def test_training_modules_are_what_training_imports():
    """``train.TRAINING_MODULES`` (the training cache's key and the stored
    runs' fingerprint) is written by hand: it must hold every module that
    training imports, except the bookkeeping ones above and the norm
    modules (each run's key covers its own, ``train.norm_fingerprint``).
    A new import fails here until it is put on one side or the other."""
    from lnpower import cache, train

    imported = {
        m for m in cache.closure("train") if not m.startswith("norms/")
    }
    listed = set(train.TRAINING_MODULES)
    assert listed & BOOKKEEPING == set()
    assert imported - BOOKKEEPING == listed - {"norms/__init__"}
    assert "norms/__init__" in listed
