"""The book's tooling, for its authors and teachers, not installed with
``lnpower``: the coursework (the problem sets' format ``exercises``, the
student ``editions``, ``grading`` in a ``kernel``, the ``otter`` export),
the Colab cells (``colab``), the training benchmark (``bench``) and the
build: every notebook under nbval (``notebooks``), the coursework check
(``coursework``), the book's execution cache (``book_cache``), the browser
check (``browser``) and the chapters' times (``chapter_times``).

``make`` puts ``tools/`` on ``PYTHONPATH``; ``python -m lnbook`` is its
command line (``assignments``, ``sync-colab``, ``bench``)."""

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]  # the repository


def toc() -> list[tuple[str, str]]:
    """Every page of the book in ``_toc.yml``'s order, as ``(part caption,
    name)`` (sections after their chapter): what the build scripts go
    through, so that a new chapter needs no other list."""
    data = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = [("", Path(data["root"]).name)]

    def walk(caption, entries):
        for e in entries:
            out.append((caption, Path(e["file"]).name))
            walk(caption, e.get("sections", []))

    for part in data["parts"]:
        walk(part["caption"], part["chapters"])
    return out


def back_matter() -> list[str]:
    """The pages of the part "Back matter" (the reproduction report reads
    what the chapters measured, so its notebooks run after them)."""
    return [n for cap, n in toc() if cap.startswith("Back matter")]


def settings(notebook: Path) -> dict:
    """A notebook's own settings for the build, its metadata ``lnbook``:
    ``budget`` (seconds for a cold run; ``null``: none; default 90)."""
    meta = json.loads(Path(notebook).read_text())["metadata"]
    return meta.get("lnbook", {})
