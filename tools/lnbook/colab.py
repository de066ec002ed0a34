"""The chapters' Colab set-up cell, kept in step with the repository named
in ``_config.yml``."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

URL = re.compile(r'REPOSITORY = "([^"]*)"')
BRANCH = re.compile(r'\{REPOSITORY\}@([^"]*)"')


def repository(config: Path) -> tuple[str, str]:
    """``(url, branch)`` of the ``repository`` section of a Jupyter Book
    ``_config.yml``."""
    text = Path(config).read_text()
    section = re.search(r"^repository:\n((?:[ \t]+.*\n?)*)", text, re.M)
    if not section:
        raise ValueError(f"{config}: no 'repository' section")
    fields = dict(
        re.findall(r"^[ \t]+(\w+):[ \t]*(\S+)", section.group(1), re.M)
    )
    if "url" not in fields:
        raise ValueError(f"{config}: 'repository' has no 'url'")
    return fields["url"], fields.get("branch", "main")


def setup_cell(nb) -> nbformat.NotebookNode:
    """The first code cell, tagged ``colab``; ``ValueError`` if the notebook
    has none."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            if "colab" not in cell.get("metadata", {}).get("tags", []):
                raise ValueError(
                    "the first code cell must be the Colab set-up cell (tag "
                    "'colab')"
                )
            return cell
    raise ValueError("the notebook has no code cell")


def installed_from(nb) -> tuple[str, str]:
    """``(url, branch)`` that a notebook's set-up cell installs from."""
    src = setup_cell(nb).source
    url, branch = URL.search(src), BRANCH.search(src)
    if not (url and branch):
        raise ValueError("the set-up cell does not name the repository")
    return url.group(1), branch.group(1)


def sync(book: Path, config: Path) -> list[Path]:
    """Rewrite every chapter's set-up cell to install from ``config``'s
    repository; returns the notebooks changed."""
    url, branch = repository(config)
    changed = []
    for p in sorted(Path(book).glob("*.ipynb")):
        nb = nbformat.read(p, as_version=4)
        if installed_from(nb) == (url, branch):
            continue
        cell = setup_cell(nb)
        src = URL.sub(lambda m: f'REPOSITORY = "{url}"', cell.source)
        cell.source = BRANCH.sub(lambda m: f'{{REPOSITORY}}@{branch}"', src)
        nbformat.write(nb, p)
        changed.append(p)
    return changed
