"""Sphinx extension: the two editions of the site.

The public edition (``make book``, the default) shows each problem set
(``book/*_problems.ipynb``) as a student gets it: every reference answer
(code cells tagged ``solution``) is replaced by its stub, the starting
point of the student edition (``lnbook.editions.stub``), and the reference
work of written exercises (cells tagged ``answer``) and every
``{solution}`` block are removed, with their outputs: removed from the
page, not folded. The notebook its download button serves is the student
edition too, and it has no launch button or link that opens the
repository's notebook (which holds the answers). The instructor edition
(``make book-instructor``, ``LNBOOK_EDITION=instructor``, built into
``_build/instructor``) keeps them all.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from docutils import nodes
from sphinx_exercise.nodes import (
    solution_end_node,
    solution_node,
    solution_start_node,
)

# the book's tooling (lnbook), which builds the student edition
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

EDITIONS = ("public", "instructor")
ANSWERS = {"tag_solution", "tag_answer"}


def _student(path: Path):
    """A problem set's student edition (``lnbook.editions``)."""
    import nbformat
    from lnbook.editions import student_edition

    return student_edition(nbformat.read(path, as_version=4))


def _stubs(path: Path) -> list[str]:
    """The stubs of a problem set's solution cells, in order (the student
    edition's)."""
    from lnbook.exercises import has_tag

    return [c.source for c in _student(path).cells if has_tag(c, "solution")]


def remove_answers(app, doctree) -> None:
    """In the public edition, a problem set's answers out of the page:
    on ``doctree-read`` before sphinx-codeautolink reads the code blocks
    (its priority 490), so that it links the stubs, not the answers."""
    docname = app.env.docname
    if not _public_problems(app, docname):
        return
    stubs = iter(_stubs(Path(app.env.doc2path(docname))))
    for cell in list(doctree.findall(nodes.container)):
        tags = set(cell.get("classes", [])) & ANSWERS
        if not tags:
            continue
        if "tag_solution" in tags:
            cell.replace_self(_stub_cell(next(stubs)))
        else:
            cell.parent.remove(cell)
    for kind in (solution_node, solution_start_node, solution_end_node):
        for node in list(doctree.findall(kind)):
            node.parent.remove(node)


def _public_problems(app, pagename: str) -> bool:
    return app.config.lnbook_edition != "instructor" and pagename.endswith(
        "_problems"
    )


def no_repository_links(app, pagename, templatename, context, doctree):
    """In the public edition, a problem set's page keeps no button that
    opens the repository's notebook (Colab, the source, the editor): only
    the download, which serves the student edition. Runs after the theme
    adds its launch buttons (its priority 501)."""
    if not _public_problems(app, pagename):
        return

    def keep(buttons: list[dict]) -> list[dict]:
        kept = []
        for b in buttons:
            url = str(b.get("url", ""))
            if url.startswith("http") and f"{pagename}.ipynb" in url:
                continue
            if "buttons" in b:
                b = {**b, "buttons": keep(b["buttons"])}
                if not b["buttons"]:
                    continue
            kept.append(b)
        return kept

    context["header_buttons"] = keep(context.get("header_buttons", []))


def student_downloads(app, exception) -> None:
    """In the public edition, the notebooks a problem set's download button
    serves (``_sources/``) are the student editions."""
    if exception or app.config.lnbook_edition == "instructor":
        return
    import nbformat

    for path in sorted(Path(app.srcdir).glob("book/*_problems.ipynb")):
        served = Path(app.outdir) / "_sources" / "book" / path.name
        if served.exists():
            nbformat.write(_student(path), served)


def _stub_cell(source: str) -> nodes.container:
    """A code cell showing the stub, as the student edition has it."""
    code = nodes.literal_block(source, source, language="python")
    cell_input = nodes.container(classes=["cell_input", "docutils"])
    cell_input += code
    cell = nodes.container(classes=["cell", "docutils", "tag_stub"])
    cell += cell_input
    return cell


def setup(app):
    edition = os.environ.get("LNBOOK_EDITION", "public")
    if edition not in EDITIONS:
        raise ValueError(
            f"LNBOOK_EDITION must be one of {EDITIONS}, got {edition!r}"
        )
    app.add_config_value("lnbook_edition", edition, "env")
    app.connect("doctree-read", remove_answers, priority=400)
    app.connect("html-page-context", no_repository_links, priority=600)
    app.connect("build-finished", student_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
