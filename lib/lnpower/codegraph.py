"""The library's own import graph, read from its source: which modules a
module imports (:func:`imports`) and everything it can depend on
(:func:`closure`), and the code of a module without its docstrings,
comments and layout (``_code``). The disk cache keys a result by the code of
that closure (``lnpower.cache``)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

HERE = Path(__file__).parent


def _module_file(parts: list[str]) -> Path | None:
    """The file of the library module ``parts`` (``["claims", "core"]``), if
    any."""
    for path in (
        HERE.joinpath(*parts).with_suffix(".py"),
        HERE.joinpath(*parts, "__init__.py"),
    ):
        if parts and path.exists():
            return path
    return None


def _name(path: Path) -> str:
    """A module's name as ``_code`` takes it: ``"claims/core"``."""
    return path.relative_to(HERE).with_suffix("").as_posix()


def imports(module: str) -> set[str]:
    """The library modules that ``module`` imports, anywhere in its code; a
    module that imports by computed name (``importlib``) counts as importing
    every module of its package."""
    path = HERE / f"{module}.py"
    package = module.split("/")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if getattr(node, "attr", None) == "import_module":  # by computed name
            found |= {_name(p) for p in path.parent.rglob("*.py")}
        if isinstance(node, ast.Import):
            bases = [
                a.name.split(".")[1:]
                for a in node.names
                if a.name.split(".")[0] == "lnpower"
            ]
            names = []
        elif isinstance(node, ast.ImportFrom):
            mod = (node.module or "").split(".") if node.module else []
            if node.level:
                bases = [package[: len(package) - node.level + 1] + mod]
            elif mod[:1] == ["lnpower"]:
                bases = [mod[1:]]
            else:
                continue
            names = [a.name for a in node.names]
        else:
            continue
        for base in bases:
            for parts in (base, *(base + [n] for n in names)):
                file = _module_file(parts)
                if file is not None:
                    found.add(_name(file))
    return found


@functools.cache
def closure(module: str) -> tuple[str, ...]:
    """``module`` and every library module it imports, directly or through
    others: the code a result computed by ``module`` can depend on. Names as
    ``_code`` takes them (``"claims/part4"``, ``"claims/__init__"``)."""
    seen, todo = set(), [module]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += imports(m) - seen
    return tuple(sorted(seen))


def _code(module: str) -> bytes:
    """A module's code without its docstrings, comments and layout: what it
    computes, so that editing prose or formatting keeps the cached results."""
    path = HERE / f"{module}.py"
    return _normalised(path, path.stat().st_mtime_ns)


@functools.cache
def _normalised(path: Path, mtime_ns: int) -> bytes:
    """:func:`_code` of one file, computed once per version of the file
    (parsing every module for every claim took 0.45 s a claim)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()
