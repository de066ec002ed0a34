"""Sphinx extension: the status page's timing tables, rendered when the book
is built.

- ``exec-total`` (``:budget:`` seconds): each notebook's execution time in
  the run this build renders (``make test`` runs every notebook once under
  nbval, two chapters at a time, from the training cache as it stands), and
  the run's wall-clock time (``_build/nbval_run.json``) against the budget
  for all chapters together. From an empty training cache (as in CI) that is
  the cold time a reader of the whole book meets.
- ``chapter-times`` (``:budget:`` seconds): each chapter run *alone* from an
  *empty* training cache (cold, as a first run in Colab) and again with the
  cache it filled (warm), as measured by ``python -m lnbook.chapter_times``,
  which writes ``book/_data/chapter_times.json`` (the measurement's date and
  machine are shown).
- ``library-times`` (``:budget:`` seconds): the library's budgets and
  ``python -m lnbook bench`` for both models, measured by the same script
  on a quiet machine.
- ``measurement-log``: the dated measurements of ``make test``, the
  benchmark and the sweeps, from ``book/_data/measurements.json``
  (``python -m lnbook.measurement_log add`` appends one).

Statuses are words, not emoji (a missing glyph would render as an empty
box).
"""

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from myst_nb.ext.execution_tables import METADATA_KEY
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective


class TimingNode(nodes.General, nodes.Element):
    """Placeholder, replaced once every notebook has run."""


def _table(head: list[str], rows: list[list[str]]) -> nodes.table:
    table = nodes.table(classes=["table"])
    group = nodes.tgroup(cols=len(head))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in head)
    thead, tbody = nodes.thead(), nodes.tbody()
    for target, cells in ((thead, [head]), (tbody, rows)):
        for cells_ in cells:
            row = nodes.row()
            for c in cells_:
                entry = nodes.entry()
                entry += nodes.paragraph(text=c)
                row += entry
            target += row
    group += thead
    group += tbody
    return table


def _verdict(seconds: float, budget: float) -> str:
    return "within" if seconds <= budget else "OVER"


class Timing(SphinxDirective):
    option_spec = {"budget": directives.positive_int}

    def run(self):
        # documents with an execution table are re-rendered whenever a notebook
        # re-runs
        NbMetadataCollector.set_doc_data(
            self.env, self.env.docname, METADATA_KEY, True
        )
        node = TimingNode()
        node["kind"] = self.name
        node["budget"] = self.options.get("budget", 300)
        data = (
            "measurements"
            if self.name == "measurement-log"
            else ("chapter_times")
        )
        node["data"] = str(
            Path(self.env.srcdir) / "book" / "_data" / f"{data}.json"
        )
        self.env.note_dependency(
            node["data"]
        )  # re-rendered when the measurement changes
        return [node]


def _exec_total(env, budget) -> list[nodes.Node]:
    runs = sorted(
        (doc.split("/")[-1], d["exec_data"]["runtime"])
        for doc, d in NbMetadataCollector.get_doc_data(env).items()
        if d.get("exec_data") and d["exec_data"].get("runtime") is not None
    )
    total = sum(t for _, t in runs)
    para = nodes.paragraph()
    run = Path(env.srcdir) / "_build" / "nbval_run.json"
    if (
        run.exists()
    ):  # written by lnbook.notebooks, which runs chapters side by side
        r = json.loads(run.read_text())
        para += nodes.strong(
            text=f"All {r['notebooks']} notebooks, {r['jobs']} at a time: "
            f"{r['wall_seconds']:.0f} s wall-clock, "
            f"{_verdict(r['wall_seconds'], budget)} the budget of "
            f"{budget} s"
        )
        para += nodes.Text(f" (their times add up to {total:.0f} s).")
    else:
        para += nodes.strong(
            text=f"All {len(runs)} notebooks together: {total:.0f} s, "
            f"{_verdict(total, budget)} the budget of {budget} s."
        )
    return [
        _table(
            ["notebook", "seconds in this build"],
            [[name, f"{t:.1f}"] for name, t in runs],
        ),
        para,
    ]


def _chapter_times(path: str, budget) -> list[nodes.Node]:
    if not Path(path).exists():
        return [
            nodes.paragraph(
                text="No measurement yet: run python -m lnbook.chapter_times."
            )
        ]
    data = json.loads(Path(path).read_text())
    chapters = sorted(data["chapters"].items())
    rows = [
        [
            name,
            f"{t['cold']:.0f}",
            f"{t['warm']:.0f}",
            f"{_verdict(t['cold'], t.get('budget', budget))} "
            f"{t.get('budget', budget):.0f} s",
        ]
        for name, t in chapters
    ]
    over = [
        name for name, t in chapters if t["cold"] > t.get("budget", budget)
    ]
    others = {
        name: t["budget"]
        for name, t in chapters
        if t.get("budget", budget) != budget
    }
    book = Path(path).resolve().parents[1]  # book/_data/chapter_times.json
    missing = sorted(
        nb.stem
        for nb in book.glob("*.ipynb")
        if nb.stem not in data["chapters"] and nb.stem != "reproduction"
    )
    text = (
        f"Measured on {data['date']} ({data['machine']}). Budget: {budget} s "
        "cold"
        + "".join(f", {b:.0f} s for {n}" for n, b in others.items())
        + (
            f". Over it: {', '.join(over)}."
            if over
            else "; every chapter measured is within it."
        )
        + (f" Not measured: {', '.join(missing)}." if missing else "")
    )
    if "report" in data:  # see python -m lnbook.chapter_times
        text += (
            " The reproduction report is not a chapter: in a build it reads "
            "the claims "
            f"the chapters measured ({data['report']['warm']:.0f} s); alone "
            "from an "
            f"empty cache it measures every claim itself, in "
            f"{data['report']['cold']:.0f} s."
        )
    para = nodes.paragraph(text=text)
    return [
        _table(["chapter", "cold (s)", "warm (s)", "cold within"], rows),
        para,
    ]


def _library_times(path: str, budget) -> list[nodes.Node]:
    data = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    if "library" not in data:
        return [
            nodes.paragraph(
                text="No measurement yet: run python -m lnbook.chapter_times "
                "--library."
            )
        ]
    lib = data["library"]
    budgets = _table(
        ["computation", "seconds", f"within {budget} s?"],
        [
            [what, f"{sec:.1f}", _verdict(sec, budget)]
            for what, sec in lib["budgets"].items()
        ],
    )
    bench = _table(
        [
            "model",
            "engine (steps/s)",
            "naive (steps/s)",
            "speed-up",
            "GFLOP/s",
            "of the matmul peak",
        ],
        [
            [
                f"{r['model']} (L = {r['loops']})",
                f"{r['engine_steps_per_s']:.1f}",
                f"{r['naive_steps_per_s']:.1f}",
                f"{r['speedup']:.2f}x",
                f"{r['gflops']:.1f}",
                f"{100 * r['efficiency']:.0f} % of {r['peak_gflops']:.0f}",
            ]
            for r in lib["bench"]
        ],
    )
    return [
        budgets,
        bench,
        nodes.paragraph(
            text=f"Measured on {data['date']} ({data['machine']})."
        ),
    ]


def _measurement_log(path: str) -> list[nodes.Node]:
    entries = json.loads(Path(path).read_text())
    return [
        _table(
            ["date", "commit", "measured", "value", "note"],
            [
                [e["date"], e["commit"], e["what"], e["value"], e["note"]]
                for e in sorted(entries, key=lambda e: e["date"])
            ],
        )
    ]


class TimingTransform(SphinxPostTransform):
    default_priority = 8

    def run(self, **kwargs):
        for node in list(self.document.findall(TimingNode)):
            if node["kind"] == "exec-total":
                new = _exec_total(self.env, node["budget"])
            elif node["kind"] == "library-times":
                new = _library_times(node["data"], node["budget"])
            elif node["kind"] == "measurement-log":
                new = _measurement_log(node["data"])
            else:
                new = _chapter_times(node["data"], node["budget"])
            node.replace_self(new)


def setup(app):
    app.add_node(TimingNode)
    app.add_directive("exec-total", Timing)
    app.add_directive("chapter-times", Timing)
    app.add_directive("library-times", Timing)
    app.add_directive("measurement-log", Timing)
    app.add_post_transform(TimingTransform)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
