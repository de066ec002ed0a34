"""The coursework tooling (student edition, grader, Otter export) on a small
synthetic chapter."""

import json
import subprocess
import sys

import nbformat
import pytest
from lnbook import editions, exercises, grading, otter

from lnpower import answers

EXERCISE = (
    ":::{{exercise}} {title}\n:label: "
    "{label}\n\n{text}\n:::\n\n:::{{solution}} {label}\n"
    ":class: dropdown\n\nThe answer is secret.\n:::"
)


def tcell(body, points=1, hidden=True, message="expected something else"):
    head = (
        f'""" # BEGIN TEST CONFIG\npoints: {points}\nhidden: '
        f"{str(hidden).lower()}\n"
        f'failure_message: {json.dumps(message)}\n""" # END TEST CONFIG\n'
    )
    tags = ["test", "remove-cell"] if hidden else ["test"]
    return nbformat.v4.new_code_cell(head + body, metadata={"tags": tags})


def chapter(
    double="def double(x):\n    return 2 * x",
    square="square_of_base = base**2",
    deriv="import sympy as sp\n\nx = sp.Symbol('x')\nderiv = sp.diff(x**3, x)",
):
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    sol = {"tags": ["solution", "hide-input"]}
    cells = [
        md("# A chapter"),
        code("base = 3"),
        md("Some text.\n\n## Exercises\n\nWork."),
        md(
            EXERCISE.format(
                title="1 — Double", label="ex-double", text="Write double."
            )
        ),
        code(double, metadata=sol),
        tcell(
            "assert callable(double)",
            points=0,
            hidden=False,
            message="define a function",
        ),
        tcell("assert double(base) == 6", message="double(3) should be 6"),
        tcell(
            "assert double(-1) == -2",
            message="double(-1) should be -2: x + 3?",
        ),
        md(
            EXERCISE.format(
                title="2 — Two parts", label="ex-two", text="(a) and (b)."
            )
        ),
        code(square, metadata=sol),
        tcell(
            "assert square_of_base == 9", points=2, message="3 squared is 9"
        ),
        code(deriv, metadata=sol),
        tcell(
            "import sympy as sp\nfrom lnpower.answers import "
            "same_expression\nassert same_expression(deriv, 3 * "
            "sp.Symbol('x')**2)",
            message="the derivative of x^3 is 3x^2",
        ),
        md(
            EXERCISE.format(
                title="3 — Explain", label="ex-written", text="Explain."
            )
        ),
        code("assert base == 3", metadata={"tags": ["answer", "hide-input"]}),
        code("print('after the exercises', base)"),
    ]
    return nbformat.v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {
                "name": "python3",
                "display_name": "Python 3",
                "language": "python",
            }
        },
    )


def write(tmp_path, nb, name="chapter.ipynb"):
    p = tmp_path / name
    nbformat.write(nb, p)
    return p


def scores(result):
    return {
        q["question"]: (q["score"], q["status"]) for q in result["questions"]
    }


def test_parts_points_and_names():
    qs = exercises.questions(chapter())
    assert [q.name for q in qs] == ["ex-double", "ex-two-a", "ex-two-b"]
    assert [q.points for q in qs] == [2, 2, 1]
    assert [t.hidden for t in qs[0].tests] == [False, True, True]
    assert qs[0].tests[2].failure_message == "double(-1) should be -2: x + 3?"


def test_instructor_edition_full_marks(tmp_path):
    r = grading.grade(write(tmp_path, chapter()), timeout=60)
    assert (r["score"], r["max_score"]) == (5, 5) and not r[
        "errors_outside"
    ], r
    assert not r["errors_in_answers"]
    assert {q["status"] for q in r["questions"]} == {"passed"}


def test_student_edition_hides_answers_and_scores_zero(tmp_path):
    src = write(tmp_path, chapter())
    out = editions.write_student_editions(src, tmp_path / "student")
    nb = nbformat.read(out[0], as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert (
        "{solution}" not in text
        and "secret" not in text
        and "return 2 * x" not in text
    )
    assert (
        "double(base) == 6" not in text and "assert base == 3" not in text
    )  # hidden, answer
    assert "assert callable(double)" in text  # the visible check stays
    assert "def double(x):" in text and "square_of_base = ..." in text
    r = grading.grade(out[0], tests=src, timeout=60)
    assert r["score"] == 0 and r["max_score"] == 5
    assert {q["status"] for q in r["questions"]} == {"not attempted"}
    assert not r["errors_outside"], (
        "cells outside the exercises must still run"
    )


def test_partial_credit_and_messages(tmp_path):
    src = write(tmp_path, chapter())
    wrong = write(
        tmp_path,
        editions.with_answer(
            chapter(), "ex-double", "def double(x):\n    return x + 3"
        ),
        "wrong.ipynb",
    )
    r = grading.grade(wrong, tests=src, timeout=60)
    assert scores(r)["ex-double"] == (1, "partial") and r["score"] == 4
    msg = " ".join(r["questions"][0]["messages"])
    assert "double(-1) should be -2: x + 3?" in msg and "hidden test 3" in msg


def test_wrong_symbolic_answer_fails(tmp_path):
    src = write(tmp_path, chapter())
    nb = editions.with_answer(
        chapter(),
        "ex-two-b",
        "import sympy as sp\n\nx = sp.Symbol('x')\nderiv = 2 * x**2",
    )
    r = grading.grade(write(tmp_path, nb, "w.ipynb"), tests=src, timeout=60)
    assert scores(r)["ex-two-b"] == (0, "failed") and r["score"] == 4


def test_tests_come_from_the_source_not_the_submission(tmp_path):
    src = write(tmp_path, chapter())
    nb = editions.student_edition(chapter())
    for c in (
        nb.cells
    ):  # a student who edits the checks and adds a test cell gains nothing
        if exercises.is_test(c):
            c.source = "pass"
    nb.cells.append(tcell("assert True", points=100))
    r = grading.grade(
        write(tmp_path, nb, "tampered.ipynb"), tests=src, timeout=60
    )
    assert r["score"] == 0 and r["max_score"] == 5


def test_grade_editions_matches_separate_grading(tmp_path):
    src = write(tmp_path, chapter())
    wrong = editions.with_answer(
        chapter(), "ex-two-a", "square_of_base = base * 2"
    )
    leak = editions.with_answer(
        chapter(), "ex-two-a", "pass"
    )  # must not see the solution's variable
    r = grading.grade_editions(
        src,
        {
            "instructor": chapter(),
            "student": editions.student_edition(chapter()),
            "wrong": wrong,
            "leak": leak,
        },
        timeout=60,
    )
    assert r["instructor"]["score"] == 5 and r["student"]["score"] == 0
    assert r["wrong"]["score"] == 3 and scores(r["wrong"])["ex-two-a"] == (
        0,
        "failed",
    )
    assert scores(r["leak"])["ex-two-a"][0] == 0, (
        "state leaked between editions"
    )
    assert not r["errors_in_body"]


def test_grade_editions_refuses_a_different_body(tmp_path):
    src = write(tmp_path, chapter())
    other = chapter()
    other.cells[1].source = "base = 4"
    with pytest.raises(ValueError, match="differs from the source"):
        grading.grade_editions(src, {"other": other}, timeout=60)


def test_exception_and_timeout_do_not_stop_grading(tmp_path):
    src = write(tmp_path, chapter())
    nb = editions.with_answer(
        chapter(), "ex-double", "def double(x):\n    return 1 / 0\n\ndouble(1)"
    )
    nb = editions.with_answer(
        nb, "ex-two-a", "import time\nwhile True:\n    time.sleep(0.1)"
    )
    r = grading.grade(write(tmp_path, nb, "bad.ipynb"), tests=src, timeout=5)
    s = scores(r)
    assert s["ex-double"] == (0, "failed") and s["ex-two-a"] == (0, "failed")
    assert s["ex-two-b"] == (1, "passed")
    assert "ZeroDivisionError" in " ".join(r["questions"][0]["messages"])
    assert len(r["errors_in_answers"]) == 2 and not r["errors_outside"]


def test_authoring_errors_are_refused():
    nb = chapter()
    nb.cells[4].metadata["tags"] = []  # tests without a solution cell
    with pytest.raises(ValueError, match="must follow a 'solution'"):
        exercises.questions(nb)
    nb = chapter()
    del nb.cells[6:8]  # a part whose only test is visible
    with pytest.raises(ValueError, match="hidden tests"):
        exercises.questions(nb)
    nb = chapter()
    nb.cells[5] = tcell("assert callable(double)", points=1, hidden=False)
    with pytest.raises(ValueError, match="carry no points"):
        exercises.questions(nb)


def test_stub():
    s = editions.stub(
        'import torch\n\n\ndef f(a, b=2):\n    """Doc."""\n    return '
        "a\n\n\nx = f(1)\n"
        "print(x)\n",
        "ex-q",
    )
    assert (
        "import torch" in s
        and 'def f(a, b=2):\n    """Doc."""\n    raise' in s
    )
    assert "x = ..." in s and "print" not in s and "return a" not in s
    assert "NotImplementedError" in editions.stub("print(1)", "ex-q")


def test_stub_binds_every_answer_name():
    """Tuple, starred, annotated and augmented assignments, and answers
    assigned inside a loop, each give one ``name = ...`` line; the stub
    runs and binds them (a bare ``raise`` would leave them undefined)."""
    src = (
        "ex4_loops, first = {}, {}\n"
        "for k in 'ab':\n"
        "    first[k] = 1\n"
        "    ex4_loops[k] = first[k]\n"
        "ex5_a, *ex5_rest = [1, 2, 3]\n"
        "ex6_b: float = 1.0\n"
        "ex6_b += 1\n"
        "for i in range(2):\n"
        "    ex7_c = i\n"
    )
    s = editions.stub(src, "ex-q")
    for name in ("ex4_loops", "ex5_a", "ex5_rest", "ex6_b", "ex7_c"):
        assert s.count(f"{name} = ...") == 1, (name, s)
    assert "first" not in s and "raise" not in s and "for" not in s
    scope: dict = {}
    exec(s, scope)
    assert scope["ex4_loops"] is Ellipsis and scope["ex7_c"] is Ellipsis


def test_stub_keeps_no_hints():
    """Comments go from kept imports and signatures; a cell that assigns
    answers loses its helper functions (with their docstrings); a function
    that is the answer keeps its signature and docstring."""
    helper = (
        "import numpy as np  # the trick: use the balance\n\n\n"
        "def law(t, D0=1.0):  # from alpha beta = gamma\n"
        '    """By bisection on the balance."""\n'
        "    return np.sqrt(t)\n\n\n"
        "ex4_predicted = law(2.0)\n"
    )
    s = editions.stub(helper, "ex-q")
    assert "import numpy as np" in s and "ex4_predicted = ..." in s
    for hint in ("trick", "balance", "law", "bisection", "alpha"):
        assert hint not in s, (hint, s)
    answer = (
        "def f(a,  # a comment inside the signature\n"
        "      b=2):  # the method\n"
        '    """The interface: a and b."""\n'
        "    return a + b\n"
    )
    s = editions.stub(answer, "ex-q")
    assert "comment" not in s and "method" not in s and "return" not in s
    assert 'b=2):\n    """The interface: a and b."""\n    raise' in s
    scope: dict = {}
    exec(s, scope)
    with pytest.raises(NotImplementedError):
        scope["f"](1)


def test_student_edition_tuple_answer_not_attempted(tmp_path):
    """A part whose answer is assigned in a tuple is 'not attempted' in the
    student edition, and no test meets an undefined name."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = chapter()
    nb.cells[-2:-2] = [
        md(
            EXERCISE.format(
                title="4 — Pairs", label="ex-pair", text="Two things."
            )
        ),
        code(
            "ex4_pair, helper = {'a': 1}, 2\nhelper += 1",
            metadata={"tags": ["solution"]},
        ),
        tcell(
            "assert isinstance(ex4_pair, dict)",
            points=0,
            hidden=False,
            message="a dict",
        ),
        tcell("assert ex4_pair == {'a': 1}", message="{'a': 1}"),
    ]
    src = write(tmp_path, nb)
    out = editions.write_student_editions(src, tmp_path / "student")
    r = grading.grade(out[0], tests=src, timeout=60)
    assert scores(r)["ex-pair"] == (0, "not attempted")
    assert r["score"] == 0 and not r["errors_in_answers"], r
    messages = " ".join(m for q in r["questions"] for m in q["messages"])
    assert "NameError" not in messages, messages
    full = grading.grade(src, timeout=60)
    assert full["score"] == full["max_score"] == 6


def test_same_expression():
    import sympy as sp

    n, d = sp.symbols("n d", positive=True)
    assert answers.same_expression(
        sp.Symbol("n") / sp.Symbol("d"), n / d
    )  # matched by name
    assert answers.same_expression(
        (n**2 + n * d - n) / d**2, n * (n + d - 1) / d**2
    )
    assert not answers.same_expression(2 * n / d, n / d)
    assert not answers.same_expression(
        n / sp.Symbol("k"), n / d
    )  # a foreign symbol
    assert not answers.same_expression(
        Ellipsis, n / d
    ) and not answers.same_expression("n/", n / d)
    x = sp.Symbol("x")
    assert (
        answers.same_expression(sp.sqrt(x**2), x, names=("x",)) is False
        or True
    )  # no crash
    assert answers.same_expression((1 + x) ** 3, 1 + 3 * x + 3 * x**2 + x**3)


def test_cli(tmp_path):
    src = write(tmp_path, chapter())
    cli = [sys.executable, "-m", "lnbook", "assignments"]
    r = subprocess.run(
        [*cli, "grade", str(src), "--json"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["score"] == out["max_score"] == 5 and len(out["questions"]) == 3
    r = subprocess.run(
        [*cli, "student", str(src), "--out", str(tmp_path / "s")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    r = subprocess.run(
        [
            *cli,
            "grade",
            str(tmp_path / "s" / "chapter.ipynb"),
            "--tests",
            str(src),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 and json.loads(r.stdout)["score"] == 0, r.stderr
    r = subprocess.run(
        [*cli, "grade", str(tmp_path / "missing.ipynb")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "no notebook" in r.stderr


def test_otter_master_structure():
    m = otter.master(chapter(), "chapter")
    raw = [c.source.split("\n")[0] for c in m.cells if c.cell_type == "raw"]
    assert raw[0] == "# ASSIGNMENT CONFIG"
    assert (
        raw.count("# BEGIN QUESTION") == 4 and raw.count("# END QUESTION") == 4
    )
    assert raw.count("# BEGIN TESTS") == 3
    assert otter.question_names_of(m) == [
        "ex-double",
        "ex-two-a",
        "ex-two-b",
        "ex-written",
    ]
    sol = next(
        c.source for c in m.cells if "# BEGIN SOLUTION NO PROMPT" in c.source
    )
    assert (
        "# BEGIN PROMPT" in sol
        and "raise NotImplementedError" in sol
        and "2 * x" in sol
    )
    text = "\n".join(c.source for c in m.cells if c.cell_type == "markdown")
    assert text.count("The answer is secret.") == 3  # each in a solution block


def test_otter_assign_and_run(tmp_path):
    """otter assign builds; otter run (no container) gives the solutions
    full marks and the student notebook zero."""
    src = write(tmp_path, chapter())
    (entry,) = otter.export(src, tmp_path / "otter")
    student = nbformat.read(entry["student"], as_version=4)
    text = "\n".join(c.source for c in student.cells)
    assert (
        "return 2 * x" not in text
        and "secret" not in text
        and "double(-1)" not in text
    )
    full = otter.run(
        entry["autograder"], entry["autograder_notebook"], tmp_path / "r1"
    )
    assert full["score"] == full["max_score"] == 5, full["questions"]
    zero = otter.run(entry["autograder"], entry["student"], tmp_path / "r2")
    assert zero["score"] == 0 and zero["max_score"] == 5, zero["questions"]


def test_body_timeout_is_separate(tmp_path):
    """A slow body cell (training on a cold cache) gets body_timeout; the
    editions' cells and the tests keep the short timeout."""
    nb = chapter()
    nb.cells[1].source = "import time\ntime.sleep(3)\nbase = 3"
    src = write(tmp_path, nb)
    slow = editions.with_answer(
        nb, "ex-two-a", "import time\ntime.sleep(3)\nsquare_of_base = 9"
    )
    r = grading.grade_editions(
        src, {"instructor": nb, "slow": slow}, timeout=2, body_timeout=20
    )
    assert not r["errors_in_body"] and r["instructor"]["score"] == 5
    assert (
        scores(r["slow"])["ex-two-a"] == (0, "failed")
        and r["slow"]["errors_in_answers"]
    )
