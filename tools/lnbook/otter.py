"""Otter-Grader export: each chapter's problem set as an Otter Assign master
notebook.

The chapter stays the single source (:mod:`lnbook.exercises`).
:func:`master` rewrites it in Otter Assign's
format (raw cells ``# ASSIGNMENT CONFIG``, ``# BEGIN QUESTION``, ``# BEGIN
SOLUTION``, ``# BEGIN TESTS`` ...): each graded part becomes a question
whose solution cell carries the student's stub as an Otter prompt and the
reference answer as the solution, and whose test cells are the chapter's
own (Otter reads the same ``# BEGIN TEST CONFIG`` header). Written
exercises become manual questions with their solutions. :func:`export` then
runs ``otter assign`` to produce the student notebook and the autograder
zip; :func:`run` grades one submission locally with ``otter run`` (no
container).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import yaml

from . import editions, exercises
from .editions import notebooks
from .exercises import has_tag


def _otter(*args: str, cwd=None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("otter")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "otter"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, cwd=cwd
    )


def export(
    book, out, requirements: str | None = None, assign: bool = True
) -> list[dict]:
    """For every chapter with graded parts in ``book`` (a folder or one
    notebook): the master notebook ``out/CHAPTER/CHAPTER.ipynb`` and, with
    ``assign``, ``otter assign``'s output in ``out/CHAPTER/dist``
    (``student/CHAPTER.ipynb`` and ``autograder/...zip``)."""
    out = Path(out)
    done = []
    for p in notebooks(book):
        nb = nbformat.read(p, as_version=4)
        if not exercises.questions(nb):
            continue
        folder = out / p.stem
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        req = None
        if requirements:
            shutil.copy(requirements, folder / "requirements.txt")
            req = "requirements.txt"
        path = folder / p.name
        nbformat.write(master(nb, p.stem, req), path)
        entry = {"chapter": p.stem, "master": str(path)}
        if assign:
            r = _otter(
                "assign",
                "--no-run-tests",
                "--no-pdfs",
                p.name,
                "dist",
                cwd=folder,
            )
            if r.returncode != 0:
                raise RuntimeError(
                    f"otter assign failed for {p.name}:\n{r.stdout[-3000:]}\n"
                    f"{r.stderr[-3000:]}"
                )
            zips = sorted((folder / "dist" / "autograder").glob("*.zip"))
            if not zips:
                raise RuntimeError(
                    f"otter assign wrote no autograder zip for {p.name}"
                )
            entry.update(
                student=str(folder / "dist" / "student" / p.name),
                autograder_notebook=str(
                    folder / "dist" / "autograder" / p.name
                ),
                autograder=str(zips[-1]),
            )
        done.append(entry)
    if not done:
        raise ValueError(f"no notebook with graded parts in {book}")
    return done


def run(autograder, submission, out) -> dict:
    """Grade ``submission`` with ``otter run`` (locally, no container):
    Otter's results (``score``, ``max_score`` and the test results per
    question)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    r = _otter(
        "run",
        "-a",
        str(Path(autograder).resolve()),
        "-o",
        str(out.resolve()),
        "--no-logo",
        str(Path(submission).resolve()),
        cwd=out,
    )
    path = out / "results.json"
    if r.returncode != 0 or not path.exists():
        raise RuntimeError(
            f"otter run failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
        )
    res = json.loads(path.read_text())
    tests = res.get("tests", [])
    return {
        "score": sum(t.get("score", 0) or 0 for t in tests),
        "max_score": sum(t.get("max_score", 0) or 0 for t in tests),
        "questions": {
            t.get("name"): (t.get("score"), t.get("max_score")) for t in tests
        },
        "raw": res,
    }


def question_names_of(nb) -> list[str]:
    """The question names of an Otter master notebook (a notebook or its
    path)."""
    if not hasattr(nb, "cells"):
        nb = nbformat.read(nb, as_version=4)
    return [
        re.search(r"name:\s*(\S+)", c.source).group(1)
        for c in nb.cells
        if c.cell_type == "raw" and c.source.startswith("# BEGIN QUESTION")
    ]


# --- the master notebook


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
    qs = {q.cell: q for q in exercises.questions(nb)}
    if not qs:
        raise ValueError(f"{name}: no graded part")
    start = exercises.exercises_start(nb)
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
            solutions = exercises.SOLUTION_BLOCK.findall(cell.source)
            text = exercises.SOLUTION_BLOCK.sub("", cell.source).strip()
            graded = any(
                has_tag(c, "solution") for c in _exercise_cells(nb, i)
            )
            if (
                exercises.EXERCISE.search(cell.source) and not graded
            ):  # written work: a manual question
                written += 1
                label = exercises.EXERCISE.findall(cell.source)[-1][1]
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
            if exercises.EXERCISE.search(cell.source):
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
                        editions.stub(cell.source, q.name), cell.source
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
        elif exercises.is_test(cell):
            t = exercises.parse_test(cell.source)
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
        if cell.cell_type == "markdown" and exercises.EXERCISE.search(
            cell.source
        ):
            break
        out.append(cell)
    return out
