"""Student editions and the autograder, on a small synthetic chapter."""

import json
import subprocess
import sys

import nbformat
import pytest

from lnpower.book import assignments

EXERCISE = ":::{{exercise}} {title}\n:label: {label}\n\n{text}\n:::\n\n:::{{solution}} {label}\n" \
           ":class: dropdown\n\nThe answer is secret.\n:::"


def chapter(solution_a="def double(x):\n    return 2 * x",
            solution_b="def square(x):\n    return x * x"):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [md("# A chapter"), code("base = 3"),
             md(EXERCISE.format(title="Double", label="ex-double", text="Write double.")),
             code(solution_a, metadata={"tags": ["solution", "hide-input"]}),
             code("assert double(base) == 6, f'double(3) gave {double(base)}, expected 6: "
                  "multiply by 2'", metadata={"tags": ["check"]}),
             md(EXERCISE.format(title="Square", label="ex-square", text="Write square.")),
             code(solution_b, metadata={"tags": ["solution"]}),
             code("assert square(base) == 9, f'square(3) gave {square(base)}, expected 9'",
                  metadata={"tags": ["check"]}),
             code("print('after the exercises', base)")]
    return nbformat.v4.new_notebook(cells=cells)


def write(tmp_path, nb, name="chapter.ipynb"):
    p = tmp_path / name
    nbformat.write(nb, p)
    return p


def test_instructor_edition_full_marks(tmp_path):
    r = assignments.grade(write(tmp_path, chapter()), timeout=60)
    assert (r["score"], r["max_score"]) == (2, 2) and not r["errors_outside"]


def test_student_edition_stubs_and_no_solutions(tmp_path):
    out = assignments.write_student_editions(write(tmp_path, chapter()), tmp_path / "student")
    nb = nbformat.read(out[0], as_version=4)
    nbformat.validate(nb)
    text = "\n".join(c.source for c in nb.cells)
    assert "{solution}" not in text and "secret" not in text and "return 2 * x" not in text
    assert "def double(x):" in text and "NotImplementedError" in text
    r = assignments.grade(out[0], timeout=60)
    assert r["score"] == 0 and {e["status"] for e in r["exercises"]} == {"not attempted"}
    assert not r["errors_outside"], "cells outside the exercises must still run"


def test_wrong_solution_gets_the_helpful_message(tmp_path):
    r = assignments.grade(write(tmp_path, chapter("def double(x):\n    return x + 2")), 60)
    assert r["exercises"][0]["status"] == "failed" and r["exercises"][1]["status"] == "passed"
    assert "double(3) gave 5, expected 6: multiply by 2" in r["exercises"][0]["message"]


def test_exception_and_timeout_do_not_stop_grading(tmp_path):
    nb = chapter("def double(x):\n    return 1 / 0\n\ndouble(1)",
                 "import time\nwhile True:\n    time.sleep(0.1)")
    r = assignments.grade(write(tmp_path, nb), timeout=5)
    statuses = [e["status"] for e in r["exercises"]]
    assert statuses == ["failed", "failed"], r
    assert "ZeroDivisionError" in r["exercises"][0]["message"]
    assert r["exercises"][1]["message"], r


def test_cli_grade_json_and_student(tmp_path):
    p = write(tmp_path, chapter())
    r = subprocess.run([sys.executable, "-m", "lnpower", "assignments", "grade", str(p), "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["score"] == out["max_score"] == 2 and len(out["exercises"]) == 2
    r = subprocess.run([sys.executable, "-m", "lnpower", "assignments", "grade",
                        str(tmp_path / "missing.ipynb")], capture_output=True, text=True)
    assert r.returncode == 2 and "no notebook" in r.stderr


def test_check_must_follow_solution():
    nb = chapter()
    nb.cells[3].metadata["tags"] = []
    with pytest.raises(ValueError, match="must follow a 'solution'"):
        assignments.exercise_labels(nb)
