"""Coursework from the chapters: the student edition and the autograder.

An exercise is a markdown cell with a ``:::{exercise}`` directive (its ``:label:`` names it); a
coding exercise adds a code cell tagged ``solution`` (the reference solution) followed by a code
cell tagged ``check`` (asserts with messages meant for students).
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import nbformat

SOLUTION_BLOCK = re.compile(r"^:::\{solution\}.*?^:::[ \t]*$\n?", re.M | re.S)
LABEL = re.compile(r":::\{exercise\}.*?:label:\s*(\S+)", re.S)


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _stub(source: str, label: str) -> str:
    """Keep the signatures of the functions a solution defines; each body raises."""
    msg = (f"Exercise {label}: replace this line with your solution (see the exercise above "
           "for what to write).")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    lines = source.splitlines()
    defs = [node for node in (tree.body if tree else []) if isinstance(node, ast.FunctionDef)]
    if not defs:
        return f"raise NotImplementedError({msg!r})\n"
    out = []
    for node in defs:
        header = "\n".join(lines[node.lineno - 1:node.body[0].lineno - 1])
        if isinstance(node.body[0], ast.Expr) and isinstance(getattr(node.body[0], "value", None),
                                                             ast.Constant):
            header = "\n".join(lines[node.lineno - 1:node.body[0].end_lineno])
        out.append(f"{header}\n    raise NotImplementedError({msg!r})\n")
    return "\n\n".join(out)


def exercise_labels(nb) -> list[tuple[int, str]]:
    """``(index of the check cell, exercise label)`` for every coding exercise, in order."""
    label, found = None, []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            labels = LABEL.findall(cell.source)
            if labels:
                label = labels[-1]
        elif "check" in _tags(cell):
            if i == 0 or "solution" not in _tags(nb.cells[i - 1]):
                raise ValueError(f"cell {i}: a 'check' cell must follow a 'solution' cell")
            found.append((i, label or f"exercise-{len(found) + 1}"))
    return found


def student_edition(nb):
    """A copy of the notebook with every ``solution`` cell replaced by a stub that raises
    ``NotImplementedError`` and every ``{solution}`` block removed from the markdown."""
    nb = copy.deepcopy(nb)
    labels = {i - 1: lab for i, lab in exercise_labels(nb)}
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            cell.source = SOLUTION_BLOCK.sub("", cell.source)
        elif "solution" in _tags(cell):
            cell.source = _stub(cell.source, labels.get(i, "?"))
            cell.metadata["tags"] = [t for t in _tags(cell) if t != "hide-input"]
    nbformat.validate(nb)
    return nb


def write_student_editions(book: Path, out: Path) -> list[Path]:
    """The student edition of every notebook in ``book`` (or of one notebook), into ``out``."""
    book, out = Path(book), Path(out)
    paths = [book] if book.suffix == ".ipynb" else sorted(book.glob("*.ipynb"))
    if not paths:
        raise ValueError(f"no notebooks found in {book}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in paths:
        nb = student_edition(nbformat.read(p, as_version=4))
        nbformat.write(nb, out / p.name)
        written.append(out / p.name)
    return written


@dataclass
class Outcome:
    """One graded exercise."""

    exercise: str
    status: str  # passed | failed | not attempted
    message: str = ""


def _error(cell) -> dict | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out
    return None


def grade(path, timeout: int = 300, kernel: str = "python3", cwd=None) -> dict:
    """Execute a submitted notebook in a fresh kernel (``timeout`` seconds per cell; a cell that
    runs longer is interrupted and counts as failed) and grade every coding exercise.

    Returns ``{"score", "max_score", "exercises": [...], "errors_outside": [...]}``."""
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    checks = exercise_labels(nb)
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=True,
                            interrupt_on_timeout=True,
                            resources={"metadata": {"path": str(cwd or path.parent)}})
    client.execute()
    results, inside = [], set()
    for i, label in checks:
        inside.update((i - 1, i))
        sol_err, chk_err = _error(nb.cells[i - 1]), _error(nb.cells[i])
        stub = next((e for e in (sol_err, chk_err) if e and e["ename"] == "NotImplementedError"),
                    None)
        if stub:  # the stub raised, in the solution cell or when the check called it
            results.append(Outcome(label, "not attempted", stub["evalue"]))
        elif sol_err:
            results.append(Outcome(label, "failed", f"{sol_err['ename']}: {sol_err['evalue']}"))
        elif chk_err:
            results.append(Outcome(label, "failed", f"{chk_err['ename']}: {chk_err['evalue']}"))
        else:
            results.append(Outcome(label, "passed"))
    errors_outside = [f"cell {j}: {e['ename']}: {e['evalue']}" for j, c in enumerate(nb.cells)
                      if c.cell_type == "code" and j not in inside and (e := _error(c))]
    return {"notebook": str(path), "score": sum(r.status == "passed" for r in results),
            "max_score": len(results), "exercises": [asdict(r) for r in results],
            "errors_outside": errors_outside}


def report(result: dict) -> str:
    """A plain-text table of a :func:`grade` result."""
    lines = [f"{result['notebook']}", f"{'exercise':<24} {'result':<14} message"]
    for r in result["exercises"]:
        lines.append(f"{r['exercise']:<24} {r['status']:<14} {r['message'][:120]}")
    lines.append(f"score: {result['score']} / {result['max_score']}")
    if result["errors_outside"]:
        lines.append("errors outside the exercises: " + "; ".join(result["errors_outside"]))
    return "\n".join(lines)
