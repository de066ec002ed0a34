"""Sphinx extension: the two editions of the site.

The public edition (``make book``, the default) shows each problem set
(``book/*_problems.ipynb``) as a student gets it: every reference answer
(code cells tagged ``solution``) is replaced by its stub, the starting
point of the student edition (``lnbook.editions.stub``), and the reference
work of written exercises (cells tagged ``answer``) and every
``{solution}`` block are removed, with their outputs: removed from the
page, not folded. The instructor edition (``make book-instructor``,
``LNBOOK_EDITION=instructor``, built into ``_build/instructor``) keeps
them all.
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

EDITIONS = ("public", "instructor")
ANSWERS = {"tag_solution", "tag_answer"}


def _stubs(path: Path) -> list[str]:
    """The stubs of a problem set's solution cells, in order (the student
    edition's)."""
    import nbformat

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from lnbook.editions import student_edition
    from lnbook.exercises import has_tag

    student = student_edition(nbformat.read(path, as_version=4))
    return [c.source for c in student.cells if has_tag(c, "solution")]


def remove_answers(app, doctree) -> None:
    """In the public edition, a problem set's answers out of the page:
    on ``doctree-read`` before sphinx-codeautolink reads the code blocks
    (its priority 490), so that it links the stubs, not the answers."""
    if app.config.lnbook_edition == "instructor":
        return
    docname = app.env.docname
    if not docname.endswith("_problems"):
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
    return {"parallel_read_safe": True, "parallel_write_safe": True}
