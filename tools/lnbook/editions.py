"""The student edition of a chapter: solutions replaced by stubs, hidden
tests and solution dropdowns removed (:mod:`lnbook.exercises`
describes the format)."""

from __future__ import annotations

import ast
import copy
from pathlib import Path

import nbformat

from .exercises import (
    ANSWER_NAME,
    SOLUTION_BLOCK,
    STUB_MESSAGE,
    _tags,
    has_tag,
    is_test,
    parse_test,
    questions,
)


def stub(source: str, name: str) -> str:
    """The student's starting point for a solution cell: imports are kept,
    every function keeps its signature (and docstring) and raises
    ``NotImplementedError``, and every answer is set to ``...`` (the names
    ``ex<N>_...`` the cell assigns; all assigned names if it has none)."""
    msg = STUB_MESSAGE.format(name=name)
    tree = ast.parse(source)
    lines = source.splitlines()
    items: list[
        tuple[str, str]
    ] = []  # ("code", text) or ("name", an assigned name)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            items.append(
                ("code", "\n".join(lines[node.lineno - 1 : node.end_lineno]))
            )
        elif isinstance(node, ast.FunctionDef):
            first = node.body[0]
            end = first.lineno - 1
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                end = first.end_lineno
            start = min(
                [d.lineno for d in node.decorator_list] + [node.lineno]
            )
            header = "\n".join(lines[start - 1 : end])
            items.append(
                ("code", f"{header}\n    raise NotImplementedError({msg!r})")
            )
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = (
                node.targets if isinstance(node, ast.Assign) else [node.target]
            )
            items += [
                ("name", t.id) for t in targets if isinstance(t, ast.Name)
            ]
    assigned = [v for kind, v in items if kind == "name"]
    keep = {v for v in assigned if ANSWER_NAME.match(v)} or set(assigned)
    out: list[str] = []
    for kind, v in items:
        if kind == "code":
            out.append(v)
        elif v in keep:
            keep.discard(v)
            out.append(f"{v} = ...  # {msg}")
    if not any("NotImplementedError" in o or "= ..." in o for o in out):
        out.append(f"raise NotImplementedError({msg!r})")
    return "\n".join(out) + "\n"


def student_edition(nb):
    """A copy of the notebook for students: every ``solution`` cell replaced
    by its :func:`stub`, every ``{solution}`` block and ``answer`` cell
    removed, every hidden test removed (visible tests stay, so students can
    check the form of their answers)."""
    nb = copy.deepcopy(nb)
    names = {q.cell: q.name for q in questions(nb)}
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            if SOLUTION_BLOCK.search(cell.source):
                cell.source = SOLUTION_BLOCK.sub("", cell.source).rstrip()
                if not cell.source.strip():
                    continue
        elif has_tag(cell, "answer"):
            continue
        elif is_test(cell):
            if parse_test(cell.source).hidden:
                continue
            cell.metadata["tags"] = [
                t for t in _tags(cell) if t != "remove-cell"
            ]
        elif has_tag(cell, "solution"):
            cell.source = stub(cell.source, names[i])
            cell.metadata["tags"] = [
                t for t in _tags(cell) if t != "hide-input"
            ]
        cells.append(cell)
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def notebooks(book: Path) -> list[Path]:
    """The notebook ``book``, or every notebook in the folder ``book``."""
    book = Path(book)
    paths = [book] if book.suffix == ".ipynb" else sorted(book.glob("*.ipynb"))
    if not paths:
        raise ValueError(f"no notebooks found in {book}")
    return paths


def write_student_editions(book: Path, out: Path) -> list[Path]:
    """The student edition of every notebook in ``book`` (or of one
    notebook), into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in notebooks(book):
        nbformat.write(
            student_edition(nbformat.read(p, as_version=4)), out / p.name
        )
        written.append(out / p.name)
    return written


def with_answer(nb, question: str, source: str):
    """A copy of ``nb`` with the solution cell of ``question`` replaced by
    ``source`` (for seeded wrong answers in the tests)."""
    nb = copy.deepcopy(nb)
    by_name = {q.name: q for q in questions(nb)}
    if question not in by_name:
        raise ValueError(
            f"no graded part {question!r}; there are {sorted(by_name)}"
        )
    nb.cells[by_name[question].cell].source = source
    return nb
