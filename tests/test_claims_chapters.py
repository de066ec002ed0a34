"""Each claim is expected in exactly one chapter, its own (``Claim.chapter``).

A chapter asserts a claim's status with ``claims.expect({...})``; this test
reads every notebook's code cells, without running them, and finds the ids
each chapter expects. A claim expected in another chapter, or in none, fails.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from lnpower.claims import REGISTRY

ROOT = Path(__file__).resolve().parents[1]


def expected_ids(notebook: Path) -> set[str]:
    """The claim ids that ``notebook``'s code cells pass to ``expect``.
    ``ValueError`` for an ``expect`` whose ids are not a literal dict."""
    ids = set()
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        code = "".join(cell["source"]).splitlines()
        code = "\n".join(line for line in code if line[:1] not in "%!")
        for node in ast.walk(ast.parse(code)):
            func = getattr(node, "func", None)
            name = getattr(func, "attr", getattr(func, "id", None))
            if not (isinstance(node, ast.Call) and name == "expect"):
                continue
            if not (node.args and isinstance(node.args[0], ast.Dict)):
                raise ValueError(
                    f"{notebook.name}: expect() needs a literal "
                    f"dict of ids: {ast.unparse(node)[:60]}"
                )
            ids |= {ast.literal_eval(k) for k in node.args[0].keys}
    return ids


def mismatches(registry, notebooks) -> list[str]:
    """One line per claim expected outside its chapter, in none, or unknown."""
    where: dict[str, set[str]] = {}
    for nb in notebooks:
        for i in expected_ids(nb):
            where.setdefault(i, set()).add(f"book/{nb.stem}")
    lines = [
        f"{i}: expected in {sorted(ch)}, but no such claim"
        for i, ch in where.items()
        if i not in registry
    ]
    for i, c in registry.items():
        found = where.get(i, set())
        if found != {c.chapter}:
            lines.append(
                f"{i}: its chapter is {c.chapter}, expected in "
                f"{sorted(found) or 'no chapter'}"
            )
    return lines


NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_every_claim_is_expected_in_its_own_chapter_only():
    assert mismatches(REGISTRY, NOTEBOOKS) == []


def test_a_claim_expected_elsewhere_fails(tmp_path):
    """A seeded mismatch: a copy of a chapter that expects a claim of
    another chapter, and a claim moved to a chapter that never expects it."""
    claim = next(iter(REGISTRY.values()))
    other = next(nb for nb in NOTEBOOKS if f"book/{nb.stem}" != claim.chapter)
    copy = tmp_path / other.name
    nb = json.loads(other.read_text())
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": f"claims.expect({{{claim.id!r}: 'x'}})",
        }
    )
    copy.write_text(json.dumps(nb))
    nbs = [copy if p == other else p for p in NOTEBOOKS]
    lines = mismatches(REGISTRY, nbs)
    assert any(line.startswith(f"{claim.id}: its chapter") for line in lines)
    assert len(lines) == 1

    moved = dict(REGISTRY)
    moved[claim.id] = dataclasses.replace(claim, chapter=f"book/{other.stem}")
    lines = mismatches(moved, NOTEBOOKS)
    assert lines == [
        f"{claim.id}: its chapter is book/{other.stem}, "
        f"expected in ['{claim.chapter}']"
    ]


def test_expect_with_computed_ids_is_refused(tmp_path):
    nb = tmp_path / "x.ipynb"
    nb.write_text(
        json.dumps(
            {"cells": [{"cell_type": "code", "source": "claims.expect(ids)"}]}
        )
    )
    with pytest.raises(ValueError, match="literal dict"):
        expected_ids(nb)


ENTRY = {
    "id": "x",
    "ref": "thm-4-1",
    "where": "Theorem 4.1",
    "statement": "s",
    "paper": "p",
    "tolerance": "t",
    "chapter": "book/x",
    "source": "paper",
    "check": "part1:_kappa",
}


@pytest.mark.parametrize(
    "change, error",
    [
        ({}, None),
        ({"ref": "thm-9-9"}, "unknown statement 'thm-9-9'"),
        ({"source": "blog"}, "source 'blog' is not one of"),
        ({"check": "part1:nothing"}, "check 'part1:nothing' is not a"),
        ({"chapter": None}, r"missing \['chapter'\], unknown \[\]"),
        ({"colour": "red"}, r"missing \[\], unknown \['colour'\]"),
    ],
)
def test_the_ledger_is_read_with_named_fields(tmp_path, change, error):
    """The ledger's loader: every field named, known statements and
    sources, a check that exists; one line naming the claim otherwise."""
    from lnpower.claims import part1
    from lnpower.claims.core import load

    entry = {k: v for k, v in {**ENTRY, **change}.items() if v is not None}
    lines = [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    path = tmp_path / "ledger.toml"
    path.write_text("[[claim]]\n" + "\n".join(lines) + "\n")
    if error is None:
        assert load(path)["x"].check is part1._kappa
        path.write_text(path.read_text() * 2)
        error = "declared twice"
    with pytest.raises(ValueError, match=f"ledger.toml, claim 'x': {error}"):
        load(path)


def test_the_ledger_is_the_registry():
    """Every check of the ledger is its own function, and every field of the
    registry came from the ledger file."""
    from lnpower.claims.core import LEDGER, load

    assert list(load(LEDGER)) == list(REGISTRY)
    checks = [c.check for c in REGISTRY.values()]
    assert len(set(checks)) == len(checks)


def test_a_claims_cache_key_covers_its_imports_and_not_the_tooling():
    """A claim is keyed by the code of its module and of what that imports
    (directly, through other modules, or by computed name), so editing the
    book's tooling (``lnpower.book``) or the plots measures nothing again."""
    from lnpower import cache
    from lnpower.claims.core import _module

    modules = {_module(c.check) for c in REGISTRY.values()}
    assert modules == {f"claims/part{i}" for i in range(1, 7)} | {
        "claims/part1_transformer",
        "claims/part4_depth",
        "claims/part4_losses",
        "claims/part2_ln",
        "claims/part2_no_ln",
        "claims/part5_saddle",
        "claims/part5_training",
    }
    for m in modules:
        used = cache.closure(m)
        assert {m, "claims/core", "cache"} <= set(used)
        assert not [
            u
            for u in used
            if u.startswith("book/")
            or u.startswith("plots")
            or u in ("cli", "__main__")
        ], used
    assert {"train", "engine", "tasks"} <= set(cache.closure("runs"))
    assert "symbolic/appendix_c/growth" in cache.closure("claims/part1")
