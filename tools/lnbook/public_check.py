"""The public site holds no reference answer: every line that only the
instructor edition prints is absent from the public HTML of its problem set.

For each problem set (``book/*_problems.ipynb``), the answer lines are the
lines of output of its reference answers (cells tagged ``solution`` or
``answer``, as executed for the build: the book's execution cache) and the
sentences of its ``{solution}`` blocks. ``python -m lnbook.public_check``
checks the public build (``_build/html``): none may appear;
``--instructor`` checks the instructor build (``_build/instructor``): all
must appear. Exits non-zero otherwise.
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from pathlib import Path

import nbformat

from lnbook import ROOT
from lnbook.exercises import SOLUTION_BLOCK, has_tag

CACHE = ROOT / "_build" / ".jupyter_cache"
PUBLIC = ROOT / "_build" / "html"
INSTRUCTOR = ROOT / "_build" / "instructor" / "_build" / "html"
MIN_LENGTH = 16  # shorter lines ("True", "0.5") could appear by chance


def _normal(text: str) -> str:
    return " ".join(text.split())


def _letters(text: str) -> str:
    """The text without any whitespace and with straight quotes: an HTML
    page splits a sentence around its inline tags (``aligns
    <strong>sooner</strong>.``), and Sphinx curls its quotes."""
    for curly, straight in (("\u2018\u2019", "'"), ("\u201c\u201d", '"')):
        for c in curly:
            text = text.replace(c, straight)
    return "".join(text.split())


def answer_lines(executed) -> set[str]:
    """What only the reference answers of an executed problem set show:
    their output lines and the sentences of the solution blocks (at least
    ``MIN_LENGTH`` characters, whitespace normalised)."""
    lines = set()
    for cell in executed.cells:
        if cell.cell_type == "markdown":
            for block in SOLUTION_BLOCK.findall(cell.source):
                body = block.split("\n", 1)[-1].rsplit(":::", 1)[0]
                body = re.sub(r"^:\w+:.*$", "", body, flags=re.M)
                body = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", body)
                body = re.sub(r"\*\*|(?<!\w)\*|\*(?!\w)", "", body)
                lines |= {
                    _normal(s)
                    for s in re.split(r"(?<=[.;:])\s|\n\n", body)
                    if "$" not in s and "{" not in s and "`" not in s
                }
        elif has_tag(cell, "solution") or has_tag(cell, "answer"):
            for out in cell.get("outputs", []):
                data = out.get("data", {})
                # text/plain is what the page shows only when there is
                # nothing richer (a Math object's is its repr)
                plain = data.get("text/plain", "") if len(data) == 1 else ""
                text = out.get("text") or plain
                text = "".join(text) if isinstance(text, list) else text
                lines |= {_normal(x) for x in text.splitlines()}
    return {x for x in lines if len(x) >= MIN_LENGTH}


def page_text(path: Path) -> str:
    """The visible text of an HTML page, whitespace normalised."""
    raw = path.read_text(encoding="utf-8")
    raw = re.sub(r"<(script|style)\b.*?</\1>", " ", raw, flags=re.S)
    return _normal(html.unescape(re.sub(r"<[^>]+>", " ", raw)))


def executed(notebook: Path):
    """The problem set with the outputs of its run in the execution
    cache."""
    from jupyter_cache import get_cache

    nb = nbformat.read(notebook, as_version=4)
    _, merged = get_cache(str(CACHE)).merge_match_into_notebook(nb)
    return merged


def check(site: Path, present: bool) -> list[str]:
    """One line per answer line found on a public page (``present`` False)
    or missing from an instructor page (``present`` True)."""
    problems = []
    for nb in sorted((ROOT / "book").glob("*_problems.ipynb")):
        lines = answer_lines(executed(nb))
        if not lines:
            problems.append(f"{nb.stem}: no answer line to look for")
            continue
        page = site / "book" / f"{nb.stem}.html"
        text = _letters(page_text(page))
        wrong = sorted(x for x in lines if (_letters(x) in text) != present)
        problems += [
            f"{nb.stem}: {'missing' if present else 'printed'}: {x[:70]}"
            for x in wrong
        ]
        if not present:
            problems += served_problems(nb, site, page.read_text("utf-8"))
    return problems


def served_problems(notebook: Path, site: Path, page: str) -> list[str]:
    """What the public page of a problem set hands out besides its text: the
    notebook its download button serves must be the student edition, and
    no link may open the repository's notebook (Colab, the source, the
    editor), which holds the answers."""
    from lnbook.editions import student_edition

    out = []
    served = site / "_sources" / "book" / notebook.name
    student = student_edition(nbformat.read(notebook, as_version=4))
    if served.exists() and [c.source for c in student.cells] != [
        c.source for c in nbformat.read(served, as_version=4).cells
    ]:
        out.append(f"{notebook.stem}: the download is not the student edition")
    for url in re.findall(r'href="(https?://[^"]+)"', page):
        if f"book/{notebook.name}" in url:
            out.append(f"{notebook.stem}: links to its notebook: {url[:60]}")
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--instructor", action="store_true")
    args = p.parse_args(argv)
    site = INSTRUCTOR if args.instructor else PUBLIC
    problems = check(site, present=args.instructor)
    for line in problems:
        print(line)
    edition = "instructor" if args.instructor else "public"
    print(f"{edition} edition: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
