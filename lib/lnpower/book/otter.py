"""Otter-Grader export: each chapter's problem set as an Otter Assign master
notebook.

The chapter stays the single source (:mod:`lnpower.book.assignments`).
:func:`~lnpower.book.otter_master.master` rewrites it in Otter Assign's
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

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from . import assignments as A
from .editions import notebooks
from .otter_master import master


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
        if not A.questions(nb):
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
