"""Checking a student's answer in the tests of a problem set:
``same_expression`` for SymPy answers."""

from __future__ import annotations

import random
from fractions import Fraction


def same_expression(
    answer,
    expected,
    names: tuple[str, ...] | None = None,
    points: int = 6,
    seed: int = 0,
) -> bool:
    """Whether a student's SymPy ``answer`` equals ``expected``: symbols are
    matched by *name* (so a student's ``Symbol('d')`` is the test's ``d``
    whatever its assumptions); an answer with a symbol outside ``names``
    (default: the symbols of ``expected``) is wrong. Decided by ``simplify``
    of the difference, and otherwise by exact evaluation at random positive
    rational points (high-precision numerics when the values are not
    rational)."""
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
        allowed.update(
            {n: sp.Symbol(n, positive=True) for n in names if n not in allowed}
        )
    try:
        answer = answer.subs({s: allowed[s.name] for s in answer.free_symbols})
    except KeyError:
        return False
    diff = answer - expected
    try:
        if sp.simplify(diff) == 0:
            return True
    # simplify can fail on odd input: fall back to numbers
    except Exception:  # noqa: BLE001
        pass
    rng = random.Random(seed)
    symbols = sorted(allowed.values(), key=lambda s: s.name)
    for _ in range(points):
        point = {
            s: sp.Rational(Fraction(rng.randint(1, 97), rng.randint(1, 13)))
            for s in symbols
        }
        try:
            a, e = answer.subs(point), expected.subs(point)
            if a.is_number and e.is_number and a.is_rational and e.is_rational:
                if sp.nsimplify(a - e) != 0:
                    return False
                continue
            gap, size = (
                abs(complex(sp.N(a - e, 60))),
                abs(complex(sp.N(e, 60))),
            )
        except (TypeError, ValueError, ZeroDivisionError):
            return False
        if not gap <= 1e-40 * max(1.0, size):
            return False
    return True
