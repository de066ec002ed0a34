"""One version, and extras that name what the book and the tests use."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import lnpower

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _names(requirements) -> set[str]:
    return {
        re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0].lower().replace("_", "-")
        for r in requirements
    }


def test_one_version():
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert version("lnpower") == lnpower.__version__


def test_book_extra_has_every_sphinx_extension_the_config_loads():
    config = (ROOT / "_config.yml").read_text()
    block = config.split("extra_extensions:")[1].split("config:")[0]
    exts = {e.strip("- ").strip() for e in block.splitlines() if e.strip()}
    wanted = {e.replace("_", "-") for e in exts if not e.startswith("sphinx.")}
    assert wanted <= _names(
        PYPROJECT["project"]["optional-dependencies"]["book"]
    )


def test_test_extra_has_what_make_test_runs():
    have = _names(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert {
        "pytest",
        "pytest-xdist",
        "nbval",
        "ruff",
        "otter-grader",
        "playwright",
        "nbclient",
    } <= have


def test_every_line_fits_the_rendered_column():
    """79 columns for the library, the tests and the notebooks' code, so that
    ``lnpower.display.source`` can show any function under the sentence
    it implements (ruff's E501 checks the same, but exempts some lines)."""
    import json

    wide = []
    files = [
        *(ROOT / "lib").rglob("*.py"),
        *(ROOT / "tests").rglob("*.py"),
        *(ROOT / "tools").rglob("*.py"),
        *(ROOT / "_ext").rglob("*.py"),
    ]
    for f in files:
        wide += [
            f"{f.name}:{i}"
            for i, line in enumerate(f.read_text().splitlines(), 1)
            if len(line) > 79
        ]
    for nb in (ROOT / "book").glob("*.ipynb"):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] == "code":
                wide += [
                    nb.name
                    for line in "".join(cell["source"]).split("\n")
                    if len(line) > 79
                ]
    assert wide == []


def library_modules() -> list[str]:
    """Every module of the reader's package but ``lnpower.__main__`` (which
    runs the command line when imported)."""
    import pkgutil

    return [
        m.name
        for m in pkgutil.walk_packages(lnpower.__path__, "lnpower.")
        if m.name != "lnpower.__main__"
    ]


def test_source_can_show_every_library_module():
    import importlib

    from lnpower.display import source

    names = library_modules()
    assert len(names) > 40
    for name in names:
        source(importlib.import_module(name))


def _parsed():
    """(path, AST) of every module of the reader's package."""
    import ast

    lib = Path(lnpower.__file__).parent
    return [(p.relative_to(lib), ast.parse(p.read_text())) for p in
            sorted(lib.rglob("*.py"))]  # fmt: skip


TOOLING = {
    "nbformat", "nbclient", "otter", "playwright", "sphinx", "nbval",
    "jupyter_cache", "pytest", "lnbook",
}  # fmt: skip


def test_the_readers_package_imports_no_tooling():
    """What ``pip install lnpower`` installs imports none of the book's
    tooling (grading, Otter, kernels, the build)."""
    import ast

    found = []
    for path, tree in _parsed():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            found += [
                f"{path}: {n}" for n in names if n.split(".")[0] in TOOLING
            ]
    assert found == []


def test_no_assert_no_reexport_no_constant_twice_no_cycle():
    """Library checks raise (``python -O`` removes ``assert``); no module
    only re-exports another's names; an upper-case constant has one home;
    the import graph has no cycle."""
    import ast

    from lnpower import cache

    asserts, reexports, homes = [], [], {}
    for path, tree in _parsed():
        asserts += [
            f"{path}:{n.lineno}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Assert)
        ]
        body = [
            n
            for n in tree.body
            if not (
                isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
            )
        ]
        if body and all(
            isinstance(n, (ast.Import, ast.ImportFrom)) for n in body
        ):
            reexports.append(str(path))
        for n in tree.body:
            targets = (
                n.targets
                if isinstance(n, ast.Assign)
                else ([n.target] if isinstance(n, ast.AnnAssign) else [])
            )
            for t in targets:
                for x in ast.walk(t):
                    if (
                        isinstance(x, ast.Name)
                        and x.id.isupper()
                        and len(x.id) > 1
                    ):
                        homes.setdefault(x.id, []).append(str(path))
    assert asserts == [] and reexports == []
    assert {k: v for k, v in homes.items() if len(v) > 1} == {}
    graph = {
        m: cache.imports(m) - {m}
        for m in (cache._name(p) for p in cache.HERE.rglob("*.py"))
    }
    state, cycles = {}, []

    def visit(m, path):
        state[m] = "open"
        for n in graph[m]:
            if state.get(n) == "open":
                cycles.append([*path[path.index(n) :], n])
            elif n not in state:
                visit(n, [*path, n])
        state[m] = "done"

    for m in graph:
        if m not in state:
            visit(m, [m])
    assert cycles == []


def _graph_size(modules: list[str]) -> tuple[int, int]:
    """The library modules ``modules`` import, directly or not, and their
    lines."""
    from lnpower import cache

    seen = set().union(*(cache.closure(m) for m in modules))
    files = (cache._module_file(m.split("/")) for m in seen)
    return len(seen), sum(len(f.read_text().splitlines()) for f in files)


def test_readme_short_with_a_line_per_module_and_its_graph_sizes():
    """The README: at most 150 lines, each top-level module of the package
    on a line of its layout, and the import-graph sizes it states are those
    of the code."""
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    layout = text[text.index("## Layout") : text.index("## Where do I add")]
    package = ROOT / "lib" / "lnpower"
    tops = {
        p.stem if p.suffix == ".py" else p.name
        for p in package.iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    } - {"__init__", "__main__"}
    missing = [
        t for t in sorted(tops) if not re.search(rf"\b{t}(\.py|/)", layout)
    ]
    assert missing == []
    science = ["tasks", "model", "config", "train", "theory", "dynamics"]
    n, lines = _graph_size([*science, "plots"])
    n2, lines2 = _graph_size(
        [*science, "plots", "claims/__init__", "chapters/with_ln"]
    )
    flat = " ".join(text.split())
    stated = re.search(
        r"pulls in (\d+) modules, about ([\d ]+) lines.*?(\d+) modules, "
        r"about ([\d ]+) lines",
        flat,
    )
    assert stated, "the README states the import graph's sizes"
    m, about, m2, about2 = (int(g.replace(" ", "")) for g in stated.groups())
    assert (m, m2) == (n, n2)
    assert abs(lines / about - 1) < 0.03 and abs(lines2 / about2 - 1) < 0.03


def test_every_module_has_its_reference_page_entry():
    """book/api.md documents every public module of the package (the strict
    build fails on an entry without its module, this on a module without its
    entry)."""
    api = (ROOT / "book" / "api.md").read_text()
    documented = set(re.findall(r"automodule:: (lnpower[\w.]*)", api))
    modules = set()
    for path in (ROOT / "lib" / "lnpower").rglob("*.py"):
        parts = list(path.relative_to(ROOT / "lib").with_suffix("").parts)
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not any(p.startswith("_") for p in parts):
            modules.add(".".join(parts))
    missing = sorted(modules - documented)
    assert missing == [], f"add to book/api.md: {missing}"
