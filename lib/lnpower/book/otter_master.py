"""The Otter Assign master notebook of a chapter's problem set
(:func:`master`; :mod:`lnpower.book.otter` exports and runs it)."""

from __future__ import annotations

import copy

import nbformat
import yaml

from . import assignments as A
from .exercises import has_tag


def _raw(text: str):
    return nbformat.v4.new_raw_cell(text)


def _prompt_and_solution(stub: str, solution: str) -> str:
    """A solution cell in Otter's format: the stub is the prompt the student
    sees, the reference answer is removed from the student notebook."""
    quote = next((q for q in ('"""', "'''") if q not in stub), None)
    if quote is None:
        raise ValueError(
            f"a stub with both kinds of triple quotes: {stub[:200]}"
        )
    return (
        f"{quote} # BEGIN PROMPT\n{stub.rstrip()}\n{quote}  # END PROMPT\n"
        f"# BEGIN SOLUTION NO PROMPT\n{solution.rstrip()}\n# END SOLUTION"
    )


def _config(name: str, requirements: str | None) -> str:
    config = {
        "name": name,
        "requirements": requirements,
        "overwrite_requirements": False,
        "export_cell": False,
        "init_cell": True,
        "check_all_cell": False,
        "run_tests": False,
        "solutions_pdf": False,
        "seed": None,
        "tests": {"files": False, "ok_format": True},
        "generate": {"pdf": False, "filtering": False, "pip_install": False},
    }
    config = {k: v for k, v in config.items() if v is not None}
    return "# ASSIGNMENT CONFIG\n" + yaml.safe_dump(config, sort_keys=False)


def master(nb, name: str, requirements: str | None = None):
    """The Otter Assign master notebook of a chapter (a new notebook)."""
    qs = {q.cell: q for q in A.questions(nb)}
    if not qs:
        raise ValueError(f"{name}: no graded part")
    start = A.exercises_start(nb)
    cells = [_raw(_config(name, requirements))]
    cells += [c for c in nb.cells[:start]]
    heading = nb.cells[start]
    body, _, rest = heading.source.partition("## Exercises")
    if body.strip():
        cells.append(nbformat.v4.new_markdown_cell(body.rstrip()))
    cells.append(nbformat.v4.new_markdown_cell("## Exercises" + rest))
    open_question = (
        None  # the name of the question whose tests are being collected
    )

    def close():
        nonlocal open_question
        if open_question:
            cells.extend([_raw("# END TESTS"), _raw("# END QUESTION")])
        open_question = None

    written = 0
    pending_prompt = (
        None  # an exercise's text, waiting for its first graded part
    )
    for i in range(start + 1, len(nb.cells)):
        cell = nb.cells[i]
        if cell.cell_type == "markdown":
            close()
            solutions = A.SOLUTION_BLOCK.findall(cell.source)
            text = A.SOLUTION_BLOCK.sub("", cell.source).strip()
            graded = any(
                has_tag(c, "solution") for c in _exercise_cells(nb, i)
            )
            if (
                A.EXERCISE.search(cell.source) and not graded
            ):  # written work: a manual question
                written += 1
                label = A.EXERCISE.findall(cell.source)[-1][1]
                cells += [
                    _raw(
                        f"# BEGIN QUESTION\nname: {label}\nmanual: "
                        "true\npoints: 0"
                    ),
                    nbformat.v4.new_markdown_cell(text),
                    _raw("# BEGIN SOLUTION"),
                ]
                cells += [
                    nbformat.v4.new_markdown_cell(s.strip()) for s in solutions
                ]
                cells += [
                    c for c in _exercise_cells(nb, i) if has_tag(c, "answer")
                ]
                cells += [_raw("# END SOLUTION"), _raw("# END QUESTION")]
                continue
            if A.EXERCISE.search(cell.source):
                pending_prompt = (text, solutions)
            elif text:
                cells.append(nbformat.v4.new_markdown_cell(text))
        elif has_tag(cell, "solution"):
            close()
            q = qs[i]
            prompt, solutions = pending_prompt or ("", [])
            pending_prompt = None
            cells.append(_raw(f"# BEGIN QUESTION\nname: {q.name}"))
            cells.append(
                nbformat.v4.new_markdown_cell(
                    prompt
                    or f"**Part {q.name}** (continued from the exercise "
                    "above)."
                )
            )
            cells.append(_raw("# BEGIN SOLUTION"))
            cells.append(
                nbformat.v4.new_code_cell(
                    _prompt_and_solution(
                        A.stub(cell.source, q.name), cell.source
                    )
                )
            )
            cells.append(_raw("# END SOLUTION"))
            # the written solution goes with the first part, hidden from
            # students
            if solutions:
                cells.append(_raw("# BEGIN SOLUTION"))
                cells += [
                    nbformat.v4.new_markdown_cell(s.strip()) for s in solutions
                ]
                cells.append(_raw("# END SOLUTION"))
            cells.append(_raw("# BEGIN TESTS"))
            open_question = q.name
        elif A.is_test(cell):
            t = A.parse_test(cell.source)
            config = {"points": t.points, "hidden": t.hidden}
            if t.failure_message:
                config["failure_message"] = t.failure_message
            if t.success_message:
                config["success_message"] = t.success_message
            head = (
                '""" # BEGIN TEST CONFIG\n'
                + yaml.safe_dump(config, sort_keys=False)
                + '""" # END TEST CONFIG\n'
            )
            cells.append(nbformat.v4.new_code_cell(head + t.source.strip()))
        elif has_tag(cell, "answer"):
            # reference work of a written exercise: with its manual question
            # above
            continue
        else:
            close()
            cells.append(cell)
    close()
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    out.cells = [copy.deepcopy(c) for c in cells]
    for k, c in enumerate(out.cells):
        c.id = f"{name[:40]}-{k:03d}"
        if c.cell_type == "code":
            c.outputs, c.execution_count = [], None
    nbformat.validate(out)
    return out


def _exercise_cells(nb, i: int) -> list:
    """The cells of the exercise whose markdown is cell ``i`` (up to the
    next markdown cell that opens an exercise)."""
    out = []
    for cell in nb.cells[i + 1 :]:
        if cell.cell_type == "markdown" and A.EXERCISE.search(cell.source):
            break
        out.append(cell)
    return out
