"""The status page's table of chapter times (``_ext/timings.py``) names the
chapters it has no measurement for instead of calling every chapter within
the budget."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))
import timings  # noqa: E402


def _text(tmp_path, chapters, notebooks):
    data = tmp_path / "book" / "_data" / "chapter_times.json"
    data.parent.mkdir(parents=True)
    data.write_text(
        json.dumps(
            {"date": "2026-12-02", "machine": "test", "chapters": chapters}
        )
    )
    for name in notebooks:
        (tmp_path / "book" / f"{name}.ipynb").write_text("{}")
    table, para = timings._chapter_times(str(data), 90)
    return para.astext()


def test_unmeasured_chapters_are_named(tmp_path):
    text = _text(
        tmp_path,
        {"a": {"cold": 10.0, "warm": 1.0}},
        ["a", "b", "reproduction"],
    )
    assert "every chapter measured is within it" in text
    assert text.endswith("Not measured: b.")


def test_over_budget_and_all_measured(tmp_path):
    text = _text(tmp_path, {"a": {"cold": 100.0, "warm": 1.0}}, ["a"])
    assert "Over it: a." in text and "Not measured" not in text
