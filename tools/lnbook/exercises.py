"""The problem set of a chapter: its exercises, graded parts and tests,
parsed from the notebook.

In a chapter, everything from the ``## Exercises`` heading on is the problem
set:

- an exercise is a markdown cell with a ``:::{exercise}`` directive (its
  ``:label:`` names it), followed by a ``:::{solution}`` dropdown (removed
  from the student edition);
- a graded part is a code cell tagged ``solution`` (the reference answer: it
  defines a function or assigns a variable) followed by code cells tagged
  ``test``. A test cell starts with Otter's test configuration::

      \"\"\" # BEGIN TEST CONFIG
      points: 1
      hidden: true
      failure_message: expected ...; did you ...?
      \"\"\" # END TEST CONFIG
      assert ...

  and passes when it runs without an exception. Hidden tests are also tagged
  ``remove-cell`` (the rendered book does not show them) and are dropped
  from the student edition; visible tests (``hidden: false``, 0 points)
  check only the form of an answer, never its value;
- a code cell tagged ``answer`` is reference work for a written exercise
  (removed from the student edition).

Parts are named after their exercise's label: ``ex-pcp-power`` for a single
part, or ``ex-pcp-power-a``, ``ex-pcp-power-b``, ... Grading always runs the
tests of the *source* chapter (the instructor edition), never those of a
submission.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import yaml

SOLUTION_BLOCK = re.compile(r"^:::\{solution\}.*?^:::[ \t]*$\n?", re.M | re.S)
EXERCISE = re.compile(r":::\{exercise\}([^\n]*)\n(?:.*?):label:\s*(\S+)", re.S)
EXERCISES_HEADING = re.compile(r"^## Exercises\b", re.M)
TEST_CONFIG = re.compile(
    r'\A\s*(?:\w+\s*=\s*)?"""\s*#\s*BEGIN\s+TEST\s+CONFIG[^\n]*\n(.*?)'
    r'^\s*"""\s*;?\s*#\s*END\s+'
    r"TEST\s+CONFIG[^\n]*(?:\n|\Z)",
    re.S | re.M | re.I,
)
STUB_MESSAGE = "Exercise {name}: replace this with your answer"
ANSWER_NAME = re.compile(
    r"^ex\d+_"
)  # the answers a solution cell assigns: ex1_kappa1, ...


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def has_tag(cell, tag: str) -> bool:
    """A code cell with the tag ``tag`` (``solution``, ``answer``, ``test``,
    ...)."""
    return cell.cell_type == "code" and tag in _tags(cell)


def is_test(cell) -> bool:
    """A test cell: tagged ``test``, or a code cell that opens with a test
    configuration."""
    return cell.cell_type == "code" and (
        "test" in _tags(cell) or bool(TEST_CONFIG.match(cell.source))
    )


# --- the problem set of a chapter
# --------------------------------------------------------------


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
        raise ValueError(
            f"{question}: the test configuration must be a mapping: "
            f"{source[:200]}"
        )
    unknown = set(config) - {
        "points",
        "hidden",
        "failure_message",
        "success_message",
    }
    if unknown:
        raise ValueError(
            f"{question}: unknown test configuration keys {sorted(unknown)}"
        )
    body = source[m.end() :] if m else source
    ast.parse(body)  # a syntax error in a test is the author's, found here
    return Test(
        question,
        body,
        float(config.get("points", 0)),
        bool(config.get("hidden", False)),
        str(config.get("failure_message", "") or ""),
        str(config.get("success_message", "") or ""),
    )


def exercises_start(nb) -> int | None:
    """Index of the cell holding the ``## Exercises`` heading, if any."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and EXERCISES_HEADING.search(
            cell.source
        ):
            return i
    return None


def questions(nb) -> list[Question]:
    """The graded parts of a notebook, in order, with their tests (see the
    module docstring)."""
    found: list[Question] = []
    label, title, parts = None, "", {}
    current = None
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            hits = EXERCISE.findall(cell.source)
            if hits:
                title, label = hits[-1][0].strip(), hits[-1][1]
                current = None
        elif has_tag(cell, "solution"):
            if label is None:
                raise ValueError(
                    f"cell {i}: a 'solution' cell before any exercise"
                )
            parts.setdefault(label, []).append(i)
            current = Question("", label, title, i)
            found.append(current)
        elif is_test(cell):
            if current is None:
                raise ValueError(
                    f"cell {i}: a test cell must follow a 'solution' cell of "
                    "its "
                    "exercise"
                )
            current.tests.append(parse_test(cell.source, current.exercise))
    for q in found:
        cells = parts[q.exercise]
        letter = "abcdefghijklmnopqrstuvwxyz"[cells.index(q.cell)]
        q.name = q.exercise if len(cells) == 1 else f"{q.exercise}-{letter}"
        for t in q.tests:
            t.question = q.name
        if not q.tests:
            raise ValueError(
                f"{q.name}: a graded part needs at least one test"
            )
        if not any(t.hidden for t in q.tests):
            raise ValueError(
                f"{q.name}: the grade must come from hidden tests"
            )
        if any(t.points and not t.hidden for t in q.tests):
            raise ValueError(
                f"{q.name}: visible tests check the form of an answer and "
                "carry "
                "no points; the hidden ones decide the grade"
            )
    names = [q.name for q in found]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate exercise labels: {names}")
    return found
