"""The ledger and the chapters: each claim is expected in exactly one
chapter, its own, and is measured by a function of that chapter's module;
a claim's cache key covers that module and what it imports, so that editing
one chapter's module measures only that chapter's claims again.

A chapter asserts its claims' statuses with ``claims.expect(module,
{...})``; this test reads every notebook's code cells, without running
them, and finds the ids each chapter expects. A claim expected in another
chapter, or in none, fails.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from lnpower import cache, claims
from lnpower.claims import report

ROOT = Path(__file__).resolve().parents[1]
LEDGER = claims.ledger()


def expected_ids(notebook: Path) -> set[str]:
    """The claim ids that ``notebook``'s code cells pass to ``expect``.
    ``ValueError`` for an ``expect`` whose ids are not a literal dict or
    whose module is not the chapter's own."""
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
            if len(node.args) != 2 or not isinstance(node.args[1], ast.Dict):
                raise ValueError(
                    f"{notebook.name}: expect() needs the chapter's module "
                    f"and a literal dict of ids: {ast.unparse(node)[:60]}"
                )
            if ast.unparse(node.args[0]) != notebook.stem:
                raise ValueError(
                    f"{notebook.name}: expect() with the module "
                    f"{ast.unparse(node.args[0])}, not {notebook.stem}"
                )
            ids |= {ast.literal_eval(k) for k in node.args[1].keys}
    return ids


def mismatches(ledger, notebooks) -> list[str]:
    """One line per claim expected outside its chapter, in none, or unknown."""
    where: dict[str, set[str]] = {}
    for nb in notebooks:
        for i in expected_ids(nb):
            where.setdefault(i, set()).add(f"book/{nb.stem}")
    lines = [
        f"{i}: expected in {sorted(ch)}, but no such claim"
        for i, ch in where.items()
        if i not in ledger
    ]
    for i, c in ledger.items():
        found = where.get(i, set())
        if found != {c.chapter}:
            lines.append(
                f"{i}: its chapter is {c.chapter}, expected in "
                f"{sorted(found) or 'no chapter'}"
            )
    return lines


NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_every_claim_is_expected_in_its_own_chapter_only():
    assert mismatches(LEDGER, NOTEBOOKS) == []


def test_a_claim_expected_elsewhere_fails(tmp_path):
    """A seeded mismatch: a copy of a chapter that expects a claim of
    another chapter, and a claim moved to a chapter that never expects it."""
    claim = next(iter(LEDGER.values()))
    other = next(nb for nb in NOTEBOOKS if f"book/{nb.stem}" != claim.chapter)
    copy = tmp_path / other.name
    nb = json.loads(other.read_text())
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": f"claims.expect({other.stem}, {{{claim.id!r}: 'x'}})",
        }
    )
    copy.write_text(json.dumps(nb))
    nbs = [copy if p == other else p for p in NOTEBOOKS]
    lines = mismatches(LEDGER, nbs)
    assert any(line.startswith(f"{claim.id}: its chapter") for line in lines)
    assert len(lines) == 1

    moved = dict(LEDGER)
    function = claim.check.partition(".")[2]
    moved[claim.id] = dataclasses.replace(
        claim, check=f"{other.stem}.{function}"
    )
    lines = mismatches(moved, NOTEBOOKS)
    assert lines == [
        f"{claim.id}: its chapter is book/{other.stem}, "
        f"expected in ['{claim.chapter}']"
    ]


@pytest.mark.parametrize(
    "source, error",
    [
        ("claims.expect(ids)", "literal dict"),
        ("claims.expect(with_ln, ids)", "literal dict"),
        ("claims.expect(with_ln, {'a': 'b'})", "module with_ln, not x"),
    ],
)
def test_expect_with_computed_ids_or_another_module_is_refused(
    tmp_path, source, error
):
    nb = tmp_path / "x.ipynb"
    cell = {"cell_type": "code", "source": source}
    nb.write_text(json.dumps({"cells": [cell]}))
    with pytest.raises(ValueError, match=error):
        expected_ids(nb)


ENTRY = {
    "id": "x",
    "ref": "thm-4-1",
    "where": "Theorem 4.1",
    "statement": "s",
    "paper": "p",
    "tolerance": "t",
    "source": "paper",
    "check": "without_ln.kappa_closed_forms",
}


@pytest.mark.parametrize(
    "change, error",
    [
        ({}, None),
        ({"ref": "thm-9-9"}, "unknown statement 'thm-9-9'"),
        ({"source": "blog"}, "source 'blog' is not one of"),
        ({"check": "part1:_kappa"}, "check 'part1:_kappa' is not 'module"),
        ({"source": None}, r"missing \['source'\], unknown \[\]"),
        ({"chapter": "book/x"}, r"missing \[\], unknown \['chapter'\]"),
        ({"colour": "red"}, r"missing \[\], unknown \['colour'\]"),
    ],
)
def test_the_ledger_is_read_with_named_fields(tmp_path, change, error):
    """The ledger's loader: every field named, known statements and
    sources, a check named as module.function; one line naming the claim
    otherwise."""
    entry = {k: v for k, v in {**ENTRY, **change}.items() if v is not None}
    lines = [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
    path = tmp_path / "ledger.toml"
    path.write_text("[[claim]]\n" + "\n".join(lines) + "\n")
    if error is None:
        assert claims.load(path)["x"].module == "without_ln"
        path.write_text(path.read_text() * 2)
        error = "declared twice"
    with pytest.raises(ValueError, match=f"ledger.toml, claim 'x': {error}"):
        claims.load(path)


def test_every_check_is_a_function_of_its_chapters_module():
    """The ledger names each claim's function directly: a function of the
    module named like the claim's chapter, one function per claim; and the
    report imports every chapter module that checks a claim."""
    seen = set()
    for c in LEDGER.values():
        module = report.CHAPTERS[c.module]
        function = getattr(module, c.check.partition(".")[2])
        assert callable(function) and function not in seen, c.id
        seen.add(function)
    assert set(report.CHAPTERS) == {c.module for c in LEDGER.values()}


def test_a_stored_run_added_measures_the_claims_again(monkeypatch, tmp_path):
    """A claim's key covers the runs stored with the library: a run stored
    (or stored under a new key) after a measurement gives every claim a new
    key."""
    before = claim_keys()
    real = claims.stored_runs_hash
    monkeypatch.setattr(claims, "stored_runs_hash", lambda: real() + "x")
    after = claim_keys()
    assert all(after[i] != before[i] for i in before)


def test_a_run_stored_again_with_the_same_key_keeps_the_claims(tmp_path):
    """Only what a stored run is (its file and key) enters the claims' keys:
    training it again elsewhere, at another speed, keeps every key."""
    import shutil

    folder = Path(claims.__file__).parents[1] / "stored_runs"
    for path in folder.glob("*.json"):
        shutil.copy(path, tmp_path)
    before = claims.stored_runs_hash(tmp_path)
    assert before == claims.stored_runs_hash()
    path = tmp_path / "layer-sphere-seed0.json"
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "wall_seconds": 1.0, "date": "x"}))
    assert claims.stored_runs_hash(tmp_path) == before
    path.write_text(json.dumps({**record, "key": record["key"] + ",lr=1"}))
    assert claims.stored_runs_hash(tmp_path) != before


def test_measuring_a_claim_with_another_module_is_refused():
    from lnpower.chapters import with_ln

    with pytest.raises(ValueError, match="is checked by lnpower.chapters"):
        claims.measure("kappa-closed-forms", with_ln)


def claim_keys() -> dict[str, str]:
    """Every claim's cache key, as :func:`lnpower.claims.measure` builds
    it."""
    return {
        c.id: claims.claim_key(c.id, report.CHAPTERS[c.module])
        for c in LEDGER.values()
    }


def test_editing_one_chapters_module_measures_only_its_claims_again(
    monkeypatch,
):
    """A claim's key covers the code of its chapter's module and of what
    that imports: edit (the normalised code of) one chapter's module, and
    exactly that chapter's claims get new keys; the tooling and the plots
    enter no key."""
    before = claim_keys()
    real = cache._code
    for name in report.CHAPTERS:
        edited = f"chapters/{name}"
        monkeypatch.setattr(
            cache,
            "_code",
            lambda m, e=edited: real(m) + (b"# edited" if m == e else b""),
        )
        after = claim_keys()
        changed = {i for i in before if after[i] != before[i]}
        assert changed == {
            c.id for c in LEDGER.values() if c.module == name
        }, name
    for c in LEDGER.values():
        used = cache.closure(f"chapters/{c.module}")
        assert not [u for u in used if u.startswith(("plots", "cli"))], used
