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
