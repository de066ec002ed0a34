"""How chapters show things: library source under the sentence it
implements, and SymPy results as typeset equations. Both render the same in
the built book, Jupyter and Colab."""

from __future__ import annotations

import inspect

import sympy as sp
from IPython.display import Code, Math

WIDTH = 80  # the rendered page's code column, in characters


def source(*objects, width: int = WIDTH) -> Code:
    """The source of library functions or classes, highlighted, read from
    the installed package (so it cannot drift from what runs). Raises
    ``ValueError`` if a line is wider than the page, where it would be cut
    off."""
    text = "\n\n".join(inspect.getsource(obj).rstrip() for obj in objects)
    wide = [line for line in text.splitlines() if len(line) > width]
    if wide:
        raise ValueError(
            f"{len(wide)} source lines wider than {width} characters, e.g. "
            f"{wide[0]!r}"
        )
    return Code(text, language="python")


def equations(*rows, aligned: bool = True) -> Math:
    """Typeset ``(left, right)`` pairs as ``left = right``, one per line;
    ``left`` is LaTeX text, ``right`` a SymPy expression (or LaTeX text)."""
    tex = [
        f"{left} &= {_tex(right)}" if aligned else f"{left} = {_tex(right)}"
        for left, right in rows
    ]
    body = r" \\ ".join(tex)
    return Math(
        rf"\begin{{aligned}}{body}\end{{aligned}}" if aligned else body
    )


def _tex(x) -> str:
    return x if isinstance(x, str) else sp.latex(x)
