"""Coursework from the chapters: graded problem sets, the student edition
and the autograder.

One source serves the book, this grader and Otter-Grader
(:mod:`lnpower.book.otter`):

- :mod:`lnpower.book.exercises`: the format of a problem set (exercises,
  graded parts, tests) and its parser, and
  :func:`~lnpower.book.answers.same_expression` for the tests;
- :mod:`lnpower.book.editions`: the student edition;
- :mod:`lnpower.book.grading`: grading a submission, or several editions at
  once.

This module gathers their public names, so that ``from
lnpower.book.assignments import ...`` serves the chapters' tests and the
command line.
"""

from .editions import (
    stub,
    student_edition,
    with_answer,
    write_student_editions,
)
from .exercises import (
    EXERCISE,
    EXERCISES_HEADING,
    SOLUTION_BLOCK,
    TEST_CONFIG,
    Question,
    Test,
    exercises_start,
    is_test,
    parse_test,
    questions,
    same_expression,
)
from .grading import Outcome, grade, grade_editions, report

__all__ = [
    "EXERCISE",
    "EXERCISES_HEADING",
    "SOLUTION_BLOCK",
    "TEST_CONFIG",
    "Outcome",
    "Question",
    "Test",
    "exercises_start",
    "grade",
    "grade_editions",
    "is_test",
    "parse_test",
    "questions",
    "report",
    "same_expression",
    "stub",
    "student_edition",
    "with_answer",
    "write_student_editions",
]
