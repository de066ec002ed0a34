"""Grading a submission, or several editions of a chapter, against the
source chapter's tests in a fresh kernel (nbclient)."""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat

from .editions import stub
from .exercises import Question, exercises_start, has_tag, is_test, questions
from .kernel import Kernel, errmsg


@dataclass
class Outcome:
    """One graded part of one submission."""

    question: str
    status: str  # passed | partial | failed | not attempted
    score: float
    max_score: float
    messages: list[str] = field(default_factory=list)


_TEST_RUNNER = "exec(compile({src!r}, {name!r}, 'exec'), dict(globals()))"


def _tests_of(source_nb) -> list[Question]:
    qs = questions(source_nb)
    if not qs:
        raise ValueError(
            "the source notebook has no graded part (no 'solution' cell with "
            "tests)"
        )
    return qs


def _grade_edition(
    k: Kernel, cells: list, qs: list[Question], source_nb
) -> dict:
    """Run ``cells`` (an edition's exercise cells, or a whole submission),
    then every test of ``qs``; the result dictionary of :func:`grade`."""
    sol_cells = [c for c in cells if has_tag(c, "solution")]
    errors_outside, errors_in_answers, attempted = [], [], {}
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or is_test(cell):
            continue
        err = k.run(cell)
        if err:
            (
                errors_in_answers
                if has_tag(cell, "solution")
                else errors_outside
            ).append(f"cell {i}: {errmsg(err)[:300]}")
    for j, q in enumerate(
        qs
    ):  # a part still holding its stub was not attempted
        ref = stub(source_nb.cells[q.cell].source, q.name)
        attempted[q.name] = not (
            len(sol_cells) == len(qs)
            and sol_cells[j].source.strip() == ref.strip()
        )
    outcomes = []
    for q in qs:
        score, messages = 0.0, []
        for n, t in enumerate(q.tests):
            err = k.code(
                _TEST_RUNNER.format(
                    src=t.source, name=f"<test {q.name} #{n + 1}>"
                )
            )
            if err is None:
                score += t.points
                if t.success_message:
                    messages.append(t.success_message)
            else:
                kind = "hidden" if t.hidden else "visible"
                why = t.failure_message or "test failed"
                messages.append(
                    f"{kind} test {n + 1} ({t.points:g} points): {why} "
                    f"[{errmsg(err)[:400]}]"
                )
        if not attempted[q.name]:
            status = "not attempted"
        elif score == q.points:
            status = "passed"
        else:
            status = "partial" if score > 0 else "failed"
        outcomes.append(Outcome(q.name, status, score, q.points, messages))
    return {
        "score": sum(o.score for o in outcomes),
        "max_score": sum(q.points for q in qs),
        "questions": [asdict(o) for o in outcomes],
        "errors_outside": errors_outside,
        "errors_in_answers": errors_in_answers,
    }


def grade(
    path, tests=None, timeout: int = 300, kernel: str = "python3", cwd=None
) -> dict:
    """Execute a submitted notebook in a fresh kernel (``timeout`` seconds
    per cell; a cell that runs longer is interrupted and counts as failed),
    then run the tests of the source chapter ``tests`` (default: the
    notebook itself, for an instructor edition) against its state.

    Test cells of the submission are ignored: a student cannot change the
    tests. Returns ``{"notebook", "tests", "score", "max_score",
    "questions": [...], "errors_outside": [...], "errors_in_answers":
    [...]}`` (errors raised by the answer cells themselves).
    """
    path = Path(path)
    sub = nbformat.read(path, as_version=4)
    source_path = Path(tests) if tests else path
    source_nb = nbformat.read(source_path, as_version=4) if tests else sub
    qs = _tests_of(source_nb)
    nb = nbformat.v4.new_notebook(metadata=sub.metadata)
    with Kernel(nb, timeout, kernel, cwd or path.parent) as k:
        out = _grade_edition(k, sub.cells, qs, source_nb)
    return {"notebook": str(path), "tests": str(source_path), **out}


_SNAPSHOT = (
    "import builtins as _b\n"
    "_b.__lnpower_snapshot = dict(globals())\n"
    "def _restore(g=globals(), b=_b):\n"
    "    snap = b.__lnpower_snapshot\n"
    "    g.clear()\n"
    "    g.update(snap)\n"
    "_b.__lnpower_restore = _restore\n"
    "del _b, _restore"
)


def grade_editions(
    source,
    editions: dict,
    timeout: int = 300,
    kernel: str = "python3",
    cwd=None,
    body_timeout: int | None = None,
) -> dict:
    """Grade several editions of one chapter (instructor, student, seeded
    wrong answers...) with the chapter's body executed once: every edition
    must have the source's cells up to the ``## Exercises`` heading; after
    the body runs, the kernel's globals are snapshotted and restored before
    each edition's exercise cells run. ``editions`` maps a name to a
    notebook. ``body_timeout`` (default ``timeout``) limits each cell of the
    body, which may train models on a cold cache; ``timeout`` each cell of
    the editions and each test. Returns ``{name: result}`` (results as
    :func:`grade`), ``"errors_in_body"`` and ``"kernel_cpu_seconds"``."""
    source = Path(source)
    src = nbformat.read(source, as_version=4)
    qs = _tests_of(src)
    start = exercises_start(src)
    if start is None:
        raise ValueError(f"{source}: no '## Exercises' heading")
    body = [c for c in src.cells[:start]]
    for name, nb in editions.items():
        mine = [c.source for c in nb.cells[:start]]
        if mine != [c.source for c in body]:
            raise ValueError(
                f"edition {name!r} differs from the source above the exercises"
            )
    nb = nbformat.v4.new_notebook(metadata=src.metadata)
    results: dict = {}
    with Kernel(nb, timeout, kernel, cwd or source.parent) as k:
        errors = []
        k.client.timeout = body_timeout or timeout
        for i, cell in enumerate(copy.deepcopy(body)):
            if cell.cell_type == "code" and (err := k.run(cell)):
                errors.append(f"cell {i}: {errmsg(err)[:300]}")
        k.client.timeout = timeout
        if err := k.code(_SNAPSHOT):
            raise RuntimeError(f"could not snapshot the kernel: {errmsg(err)}")
        for name, ed in editions.items():
            if err := k.code("__import__('builtins').__lnpower_restore()"):
                raise RuntimeError(
                    f"could not restore the kernel: {errmsg(err)}"
                )
            res = _grade_edition(k, copy.deepcopy(ed.cells[start:]), qs, src)
            results[name] = {"notebook": name, "tests": str(source), **res}
    results["errors_in_body"] = errors
    results["kernel_cpu_seconds"] = k.cpu_seconds
    return results


def report(result: dict) -> str:
    """A plain-text table of a :func:`grade` result."""
    lines = [
        f"{result['notebook']} (tests from {result['tests']})",
        f"{'part':<26} {'result':<14} {'score':>9}  messages",
    ]
    for r in result["questions"]:
        msg = " | ".join(r["messages"])
        lines.append(
            f"{r['question']:<26} {r['status']:<14} "
            f"{r['score']:>4g} / {r['max_score']:<3g} {msg[:300]}"
        )
    lines.append(f"score: {result['score']:g} / {result['max_score']:g}")
    if result["errors_outside"]:
        lines.append(
            "errors outside the graded parts: "
            + "; ".join(result["errors_outside"])
        )
    if result.get("errors_in_answers"):
        lines.append(
            "errors in the answer cells: "
            + "; ".join(result["errors_in_answers"])
        )
    return "\n".join(lines)
