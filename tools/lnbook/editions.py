"""The student edition of a chapter: solutions replaced by stubs, hidden
tests and solution dropdowns removed (:mod:`lnbook.exercises`
describes the format)."""

from __future__ import annotations

import ast
import copy
import io
import tokenize
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


def _without_comments(code: str) -> str:
    """``code`` with its comments removed (and the lines that held only a
    comment): a kept import or signature carries no hint."""
    lines = code.splitlines()
    cuts: dict[int, int] = {}
    for tok in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
        if tok.type == tokenize.COMMENT:
            cuts[tok.start[0] - 1] = tok.start[1]
    kept = []
    for i, line in enumerate(lines):
        if i in cuts:
            line = line[: cuts[i]].rstrip()
            if not line:
                continue
        kept.append(line)
    return "\n".join(kept)


def _names(target) -> list[str]:
    """The names an assignment target binds: ``x``, each of ``x, y``,
    ``[x, *rest]``; none for ``x[k]`` or ``x.attr``."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _names(t)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []


def _assigned(node) -> list[str]:
    """The names an assignment statement binds (``=``, ``: T =``, ``+=``)."""
    if isinstance(node, ast.Assign):
        return [n for t in node.targets for n in _names(t)]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return _names(node.target)
    return []


def _statements(body):
    """Every statement of ``body``, in order, descending into loops,
    conditions, ``with`` and ``try`` but not into functions or classes."""
    for node in body:
        yield node
        if isinstance(
            node,
            (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
        ):
            continue
        for part in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, part, []) or [])
        for handler in getattr(node, "handlers", []) or []:
            yield from _statements(handler.body)


def stub(source: str, name: str) -> str:
    """The student's starting point for a solution cell.

    - Imports are kept, without their comments.
    - The answers are set to ``...``: the names ``ex<N>_...`` the cell
      assigns anywhere outside a function (``ex1_a = ...``,
      ``ex1_a, helper = ...``, ``ex1_a: float = ...``), each once, in the
      order of their first assignment.
    - A cell that assigns no such name has functions for answers: each keeps
      its decorators, signature and docstring (without comments) and raises
      ``NotImplementedError``, and the names the cell assigns at the top
      level are set to ``...``. In a cell that does assign answers, its
      functions are the solution's own helpers and are left out, with
      everything else the solution computes.
    - A cell with neither gets a bare ``raise NotImplementedError``."""
    msg = STUB_MESSAGE.format(name=name)
    tree = ast.parse(source)
    lines = source.splitlines()
    answers: list[str] = []
    for node in _statements(tree.body):
        for n in _assigned(node):
            if ANSWER_NAME.match(n) and n not in answers:
                answers.append(n)
    out: list[str] = []
    if answers:
        out += [
            _without_comments(ast.get_source_segment(source, node))
            for node in tree.body
            if _kept_import(node)
        ]
        out += [_unset(v, msg) for v in answers]
    else:
        seen: set[str] = set()
        for node in tree.body:
            if _kept_import(node):
                out.append(
                    _without_comments(ast.get_source_segment(source, node))
                )
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
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
                header = _without_comments("\n".join(lines[start - 1 : end]))
                out.append(f"{header}\n{_raise(msg, '    ')}")
            for v in _assigned(node):
                if v not in seen:
                    seen.add(v)
                    out.append(_unset(v, msg))
    if not any("NotImplementedError" in o or "= ..." in o for o in out):
        out.append(_raise(msg))
    return "\n".join(out) + "\n"


# the imports a stub keeps: the array and algebra libraries and the book's
# display helpers; an import of the library's science (or of mpmath) would
# name the method, so the student writes it
STUB_IMPORTS = ("numpy", "sympy", "math", "torch", "lnpower.display")


def _kept_import(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and not node.level:
        names = [node.module or ""]
    else:
        return False
    return all(
        any(n == m or n.startswith(m + ".") for m in STUB_IMPORTS)
        for n in names
    )


def _unset(name: str, msg: str) -> str:
    """A stub's answer line, its message after it or, where the line would
    pass 79 columns, above it."""
    line = f"{name} = ...  # {msg}"
    return line if len(line) <= 79 else f"# {msg}\n{name} = ..."


def _raise(msg: str, indent: str = "") -> str:
    """A stub's ``raise NotImplementedError``, its message on a line of its
    own (so that it fits 79 columns)."""
    return (
        f"{indent}raise NotImplementedError(\n{indent}    {msg!r}\n{indent})"
    )


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
