"""Coursework from the chapters: graded problem sets, the student edition and the autograder.

One source serves the book, this grader and Otter-Grader (:mod:`lnpower.book.otter`). In a
chapter, everything from the ``## Exercises`` heading on is the problem set:

- an exercise is a markdown cell with a ``:::{exercise}`` directive (its ``:label:`` names it),
  followed by a ``:::{solution}`` dropdown (removed from the student edition);
- a graded part is a code cell tagged ``solution`` (the reference answer: it defines a function
  or assigns a variable) followed by code cells tagged ``test``. A test cell starts with
  Otter's test configuration::

      \"\"\" # BEGIN TEST CONFIG
      points: 1
      hidden: true
      failure_message: expected ...; did you ...?
      \"\"\" # END TEST CONFIG
      assert ...

  and passes when it runs without an exception. Hidden tests are also tagged ``remove-cell``
  (the rendered book does not show them) and are dropped from the student edition; visible
  tests (``hidden: false``, 0 points) check only the form of an answer, never its value;
- a code cell tagged ``answer`` is reference work for a written exercise (removed from the
  student edition).

Parts are named after their exercise's label: ``ex-pcp-power`` for a single part, or
``ex-pcp-power-a``, ``ex-pcp-power-b``, ... Grading always runs the tests of the *source*
chapter (the instructor edition), never those of a submission.
"""

from __future__ import annotations

import ast
import copy
import random
import re
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import nbformat
import yaml

SOLUTION_BLOCK = re.compile(r"^:::\{solution\}.*?^:::[ \t]*$\n?", re.M | re.S)
EXERCISE = re.compile(r":::\{exercise\}([^\n]*)\n(?:.*?):label:\s*(\S+)", re.S)
EXERCISES_HEADING = re.compile(r"^## Exercises\b", re.M)
TEST_CONFIG = re.compile(
    r'\A\s*(?:\w+\s*=\s*)?"""\s*#\s*BEGIN\s+TEST\s+CONFIG[^\n]*\n(.*?)^\s*"""\s*;?\s*#\s*END\s+'
    r"TEST\s+CONFIG[^\n]*(?:\n|\Z)", re.S | re.M | re.I)
STUB_MESSAGE = "Exercise {name}: replace this with your answer"
ANSWER_NAME = re.compile(r"^ex\d+_")  # the answers a solution cell assigns: ex1_kappa1, ...


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _has(cell, tag: str) -> bool:
    return cell.cell_type == "code" and tag in _tags(cell)


def is_test(cell) -> bool:
    """A test cell: tagged ``test``, or a code cell that opens with a test configuration."""
    return cell.cell_type == "code" and ("test" in _tags(cell) or bool(TEST_CONFIG.match(
        cell.source)))


# --- the problem set of a chapter --------------------------------------------------------------


@dataclass
class Test:
    """One test case of a graded part."""

    question: str
    source: str  # the test's code, without its configuration
    points: float
    hidden: bool
    failure_message: str = ""
    success_message: str = ""


@dataclass
class Question:
    """One graded part: a solution cell and its tests."""

    name: str
    exercise: str
    title: str
    cell: int  # index of the solution cell
    tests: list[Test] = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests)


def parse_test(source: str, question: str = "?") -> Test:
    """Split a test cell into its configuration and its code."""
    m = TEST_CONFIG.match(source)
    config = yaml.safe_load(m.group(1)) if m else {}
    if not isinstance(config, dict):
        raise ValueError(f"{question}: the test configuration must be a mapping: {source[:200]}")
    unknown = set(config) - {"points", "hidden", "failure_message", "success_message"}
    if unknown:
        raise ValueError(f"{question}: unknown test configuration keys {sorted(unknown)}")
    body = source[m.end():] if m else source
    ast.parse(body)  # a syntax error in a test is the author's, found here
    return Test(question, body, float(config.get("points", 0)), bool(config.get("hidden", False)),
                str(config.get("failure_message", "") or ""),
                str(config.get("success_message", "") or ""))


def exercises_start(nb) -> int | None:
    """Index of the cell holding the ``## Exercises`` heading, if any."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and EXERCISES_HEADING.search(cell.source):
            return i
    return None


def questions(nb) -> list[Question]:
    """The graded parts of a notebook, in order, with their tests (see the module docstring)."""
    found: list[Question] = []
    label, title, parts = None, "", {}
    current = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            hits = EXERCISE.findall(cell.source)
            if hits:
                title, label = hits[-1][0].strip(), hits[-1][1]
                current = None
        elif _has(cell, "solution"):
            if label is None:
                raise ValueError(f"cell {i}: a 'solution' cell before any exercise")
            parts.setdefault(label, []).append(i)
            current = Question("", label, title, i)
            found.append(current)
        elif is_test(cell):
            if current is None:
                raise ValueError(f"cell {i}: a test cell must follow a 'solution' cell of its "
                                 "exercise")
            current.tests.append(parse_test(cell.source, current.exercise))
    for q in found:
        cells = parts[q.exercise]
        q.name = q.exercise if len(cells) == 1 else \
            f"{q.exercise}-{'abcdefghijklmnopqrstuvwxyz'[cells.index(q.cell)]}"
        for t in q.tests:
            t.question = q.name
        if not q.tests:
            raise ValueError(f"{q.name}: a graded part needs at least one test")
        if not any(t.hidden for t in q.tests):
            raise ValueError(f"{q.name}: the grade must come from hidden tests")
        if any(t.points and not t.hidden for t in q.tests):
            raise ValueError(f"{q.name}: visible tests check the form of an answer and carry "
                             "no points; the hidden ones decide the grade")
    names = [q.name for q in found]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate exercise labels: {names}")
    return found


# --- the student edition -------------------------------------------------------------------------


def stub(source: str, name: str) -> str:
    """The student's starting point for a solution cell: imports are kept, every function keeps
    its signature (and docstring) and raises ``NotImplementedError``, and every answer is set to
    ``...`` (the names ``ex<N>_...`` the cell assigns; all assigned names if it has none)."""
    msg = STUB_MESSAGE.format(name=name)
    tree = ast.parse(source)
    lines = source.splitlines()
    items: list[tuple[str, str]] = []  # ("code", text) or ("name", an assigned name)
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            items.append(("code", "\n".join(lines[node.lineno - 1:node.end_lineno])))
        elif isinstance(node, ast.FunctionDef):
            first = node.body[0]
            end = first.lineno - 1
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                    isinstance(first.value.value, str):
                end = first.end_lineno
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            header = "\n".join(lines[start - 1:end])
            items.append(("code", f"{header}\n    raise NotImplementedError({msg!r})"))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            items += [("name", t.id) for t in targets if isinstance(t, ast.Name)]
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
    """A copy of the notebook for students: every ``solution`` cell replaced by its
    :func:`stub`, every ``{solution}`` block and ``answer`` cell removed, every hidden test
    removed (visible tests stay, so students can check the form of their answers)."""
    nb = copy.deepcopy(nb)
    names = {q.cell: q.name for q in questions(nb)}
    cells = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            if SOLUTION_BLOCK.search(cell.source):
                cell.source = SOLUTION_BLOCK.sub("", cell.source).rstrip()
                if not cell.source.strip():
                    continue
        elif _has(cell, "answer"):
            continue
        elif is_test(cell):
            if parse_test(cell.source).hidden:
                continue
            cell.metadata["tags"] = [t for t in _tags(cell) if t != "remove-cell"]
        elif _has(cell, "solution"):
            cell.source = stub(cell.source, names[i])
            cell.metadata["tags"] = [t for t in _tags(cell) if t != "hide-input"]
        cells.append(cell)
    nb.cells = cells
    nbformat.validate(nb)
    return nb


def _notebooks(book: Path) -> list[Path]:
    book = Path(book)
    paths = [book] if book.suffix == ".ipynb" else sorted(book.glob("*.ipynb"))
    if not paths:
        raise ValueError(f"no notebooks found in {book}")
    return paths


def write_student_editions(book: Path, out: Path) -> list[Path]:
    """The student edition of every notebook in ``book`` (or of one notebook), into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for p in _notebooks(book):
        nbformat.write(student_edition(nbformat.read(p, as_version=4)), out / p.name)
        written.append(out / p.name)
    return written


def with_answer(nb, question: str, source: str):
    """A copy of ``nb`` with the solution cell of ``question`` replaced by ``source`` (for
    seeded wrong answers in the tests)."""
    nb = copy.deepcopy(nb)
    by_name = {q.name: q for q in questions(nb)}
    if question not in by_name:
        raise ValueError(f"no graded part {question!r}; there are {sorted(by_name)}")
    nb.cells[by_name[question].cell].source = source
    return nb


# --- grading ---------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One graded part of one submission."""

    question: str
    status: str  # passed | partial | failed | not attempted
    score: float
    max_score: float
    messages: list[str] = field(default_factory=list)


_TEST_RUNNER = ("exec(compile({src!r}, {name!r}, 'exec'), dict(globals()))")


def _error(cell) -> dict | None:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            return out
    return None


def _errmsg(err: dict) -> str:
    return f"{err['ename']}: {err['evalue']}".strip()


class _Kernel:
    """Runs cells one by one in a kernel (nbclient), recording errors instead of stopping."""

    def __init__(self, nb, timeout: int, kernel: str, cwd):
        from nbclient import NotebookClient

        self.client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=True,
                                     interrupt_on_timeout=True,
                                     resources={"metadata": {"path": str(cwd)}})

    def __enter__(self):
        self._ctx = self.client.setup_kernel()
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        self.cpu_seconds = self._cpu()
        return self._ctx.__exit__(*exc)

    def _cpu(self) -> float | None:
        """CPU seconds the kernel (and its children) used: a measure of the work done that,
        unlike wall-clock time, does not depend on how busy the machine is."""
        try:
            import psutil

            proc = psutil.Process(self.client.km.provisioner.process.pid)
            procs = [proc, *proc.children(recursive=True)]
            return sum(sum(p.cpu_times()[:2]) for p in procs)
        except Exception:  # noqa: BLE001 (a measurement only: absent where unavailable)
            return None

    def run(self, cell) -> dict | None:
        """Execute one code cell (in place); its error output, if any."""
        cell.outputs = []
        self.client.nb.cells.append(cell)  # nbclient stores the executed cell at its index
        self.client.execute_cell(cell, len(self.client.nb.cells) - 1)
        return _error(self.client.nb.cells[-1])

    def code(self, source: str) -> dict | None:
        return self.run(nbformat.v4.new_code_cell(source))


def _tests_of(source_nb) -> list[Question]:
    qs = questions(source_nb)
    if not qs:
        raise ValueError("the source notebook has no graded part (no 'solution' cell with tests)")
    return qs


def _grade_edition(k: _Kernel, cells: list, qs: list[Question], source_nb) -> dict:
    """Run ``cells`` (an edition's exercise cells, or a whole submission), then every test of
    ``qs``; the result dictionary of :func:`grade`."""
    sol_cells = [c for c in cells if _has(c, "solution")]
    errors_outside, errors_in_answers, attempted = [], [], {}
    for i, cell in enumerate(cells):
        if cell.cell_type != "code" or is_test(cell):
            continue
        err = k.run(cell)
        if err:
            (errors_in_answers if _has(cell, "solution") else errors_outside).append(
                f"cell {i}: {_errmsg(err)[:300]}")
    for j, q in enumerate(qs):  # a part still holding its stub was not attempted
        ref = stub(source_nb.cells[q.cell].source, q.name)
        attempted[q.name] = not (len(sol_cells) == len(qs) and sol_cells[j].source.strip()
                                 == ref.strip())
    outcomes = []
    for q in qs:
        score, messages = 0.0, []
        for n, t in enumerate(q.tests):
            err = k.code(_TEST_RUNNER.format(src=t.source, name=f"<test {q.name} #{n + 1}>"))
            if err is None:
                score += t.points
                if t.success_message:
                    messages.append(t.success_message)
            else:
                kind = "hidden" if t.hidden else "visible"
                why = t.failure_message or "test failed"
                messages.append(f"{kind} test {n + 1} ({t.points:g} points): {why} "
                                f"[{_errmsg(err)[:400]}]")
        if not attempted[q.name]:
            status = "not attempted"
        elif score == q.points:
            status = "passed"
        else:
            status = "partial" if score > 0 else "failed"
        outcomes.append(Outcome(q.name, status, score, q.points, messages))
    return {"score": sum(o.score for o in outcomes), "max_score": sum(q.points for q in qs),
            "questions": [asdict(o) for o in outcomes], "errors_outside": errors_outside,
            "errors_in_answers": errors_in_answers}


def grade(path, tests=None, timeout: int = 300, kernel: str = "python3", cwd=None) -> dict:
    """Execute a submitted notebook in a fresh kernel (``timeout`` seconds per cell; a cell that
    runs longer is interrupted and counts as failed), then run the tests of the source chapter
    ``tests`` (default: the notebook itself, for an instructor edition) against its state.

    Test cells of the submission are ignored: a student cannot change the tests. Returns
    ``{"notebook", "tests", "score", "max_score", "questions": [...], "errors_outside": [...],
    "errors_in_answers": [...]}`` (errors raised by the answer cells themselves).
    """
    path = Path(path)
    sub = nbformat.read(path, as_version=4)
    source_path = Path(tests) if tests else path
    source_nb = nbformat.read(source_path, as_version=4) if tests else sub
    qs = _tests_of(source_nb)
    nb = nbformat.v4.new_notebook(metadata=sub.metadata)
    with _Kernel(nb, timeout, kernel, cwd or path.parent) as k:
        out = _grade_edition(k, sub.cells, qs, source_nb)
    return {"notebook": str(path), "tests": str(source_path), **out}


_SNAPSHOT = ("import builtins as _b\n"
             "_b.__lnpower_snapshot = dict(globals())\n"
             "def _restore(g=globals(), b=_b):\n"
             "    snap = b.__lnpower_snapshot\n"
             "    g.clear()\n"
             "    g.update(snap)\n"
             "_b.__lnpower_restore = _restore\n"
             "del _b, _restore")


def grade_editions(source, editions: dict, timeout: int = 300, kernel: str = "python3",
                   cwd=None, body_timeout: int | None = None) -> dict:
    """Grade several editions of one chapter (instructor, student, seeded wrong answers...) with
    the chapter's body executed once: every edition must have the source's cells up to the
    ``## Exercises`` heading; after the body runs, the kernel's globals are snapshotted and
    restored before each edition's exercise cells run. ``editions`` maps a name to a notebook.
    ``body_timeout`` (default ``timeout``) limits each cell of the body, which may train
    models on a cold cache; ``timeout`` each cell of the editions and each test.
    Returns ``{name: result}`` (results as :func:`grade`), ``"errors_in_body"`` and
    ``"kernel_cpu_seconds"``."""
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
            raise ValueError(f"edition {name!r} differs from the source above the exercises")
    nb = nbformat.v4.new_notebook(metadata=src.metadata)
    results: dict = {}
    with _Kernel(nb, timeout, kernel, cwd or source.parent) as k:
        errors = []
        k.client.timeout = body_timeout or timeout
        for i, cell in enumerate(copy.deepcopy(body)):
            if cell.cell_type == "code" and (err := k.run(cell)):
                errors.append(f"cell {i}: {_errmsg(err)[:300]}")
        k.client.timeout = timeout
        if (err := k.code(_SNAPSHOT)):
            raise RuntimeError(f"could not snapshot the kernel: {_errmsg(err)}")
        for name, ed in editions.items():
            if (err := k.code("__import__('builtins').__lnpower_restore()")):
                raise RuntimeError(f"could not restore the kernel: {_errmsg(err)}")
            res = _grade_edition(k, copy.deepcopy(ed.cells[start:]), qs, src)
            results[name] = {"notebook": name, "tests": str(source), **res}
    results["errors_in_body"] = errors
    results["kernel_cpu_seconds"] = k.cpu_seconds
    return results


def report(result: dict) -> str:
    """A plain-text table of a :func:`grade` result."""
    lines = [f"{result['notebook']} (tests from {result['tests']})",
             f"{'part':<26} {'result':<14} {'score':>9}  messages"]
    for r in result["questions"]:
        msg = " | ".join(r["messages"])
        lines.append(f"{r['question']:<26} {r['status']:<14} "
                     f"{r['score']:>4g} / {r['max_score']:<3g} {msg[:300]}")
    lines.append(f"score: {result['score']:g} / {result['max_score']:g}")
    if result["errors_outside"]:
        lines.append("errors outside the graded parts: " + "; ".join(result["errors_outside"]))
    if result.get("errors_in_answers"):
        lines.append("errors in the answer cells: " + "; ".join(result["errors_in_answers"]))
    return "\n".join(lines)


# --- helpers for the tests in the chapters ----------------------------------------------------


def same_expression(answer, expected, names: tuple[str, ...] | None = None, points: int = 6,
                    seed: int = 0) -> bool:
    """Whether a student's SymPy ``answer`` equals ``expected``: symbols are matched by *name*
    (so a student's ``Symbol('d')`` is the test's ``d`` whatever its assumptions); an answer with
    a symbol outside ``names`` (default: the symbols of ``expected``) is wrong. Decided by
    ``simplify`` of the difference, and otherwise by exact evaluation at random positive
    rational points (high-precision numerics when the values are not rational)."""
    import sympy as sp

    try:
        answer = sp.sympify(answer)
    except (sp.SympifyError, TypeError, SyntaxError):
        return False
    if not isinstance(answer, sp.Basic):
        return False
    expected = sp.sympify(expected)
    allowed = {s.name: s for s in expected.free_symbols}
    if names is not None:
        allowed.update({n: sp.Symbol(n, positive=True) for n in names if n not in allowed})
    try:
        answer = answer.subs({s: allowed[s.name] for s in answer.free_symbols})
    except KeyError:
        return False
    diff = answer - expected
    try:
        if sp.simplify(diff) == 0:
            return True
    except Exception:  # noqa: BLE001 (simplify can fail on odd input: fall back to numbers)
        pass
    rng = random.Random(seed)
    symbols = sorted(allowed.values(), key=lambda s: s.name)
    for _ in range(points):
        point = {s: sp.Rational(Fraction(rng.randint(1, 97), rng.randint(1, 13)))
                 for s in symbols}
        try:
            a, e = answer.subs(point), expected.subs(point)
            if a.is_number and e.is_number and a.is_rational and e.is_rational:
                if sp.nsimplify(a - e) != 0:
                    return False
                continue
            gap, size = abs(complex(sp.N(a - e, 60))), abs(complex(sp.N(e, 60)))
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not gap <= 1e-40 * max(1.0, size):
            return False
    return True
