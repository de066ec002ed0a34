"""Each chapter alone, cold and warm: what a reader meets on a first run in
Colab.

For every notebook (or those named): copy it alone into an empty folder and
execute it in a fresh kernel with an *empty* training cache (cold), then
once more with the cache that run filled (warm). Then the library's budgets
(the theory's constants from 2e5 Monte Carlo samples, 10^6 steps of the
reduced dynamics: each within 10 s, computed, not read from the cache) and
``python -m lnbook bench`` for both models. Writes
``book/_data/chapter_times.json``, which the status page shows against the
budgets. Run it on a quiet machine: it measures wall-clock time (measured
inside ``make test``, next to another chapter, these would say more about
the other chapter than about the library).

Usage: ``python -m lnbook.chapter_times [--library] [book/chapter.ipynb
...]`` (``--library``: only the library's budgets and the benchmark); exits
non-zero if a notebook fails, a cold run or a library budget is over, or the
engine is not faster than the naive reference.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from lnbook import ROOT, settings

OUT = ROOT / "book" / "_data" / "chapter_times.json"
BUDGET = 90.0  # a chapter's, unless its metadata says otherwise (settings)
LIBRARY_BUDGET = 10.0


def run(notebook: Path, cache: Path) -> float:
    """Seconds to execute ``notebook`` alone in an empty folder with
    ``cache``."""
    with tempfile.TemporaryDirectory(prefix="lnpower-chapter-") as tmp:
        copy = Path(tmp) / notebook.name
        shutil.copy(notebook, copy)
        nb = nbformat.read(copy, as_version=4)
        os.environ.update(LNPOWER_CACHE=str(cache), LNPOWER_PROGRESS="0")
        t0 = time.perf_counter()
        NotebookClient(
            nb,
            timeout=1200,
            kernel_name="python3",
            resources={"metadata": {"path": tmp}},
        ).execute()
        return time.perf_counter() - t0


def library() -> dict:
    """Seconds for the library's budgets, and the benchmark of both models."""
    from lnbook import bench
    from lnpower import dynamics, theory
    from lnpower.config import PAPER
    from lnpower.tasks import Task

    task = Task("sphere", PAPER.d, PAPER.n)
    t0 = time.perf_counter()
    theory.constants(
        task, sample=theory.draw(task, 200_000, 0, cache=False), loops=10
    )
    t_const = time.perf_counter() - t0
    tab = dynamics.ln_layer_table(
        theory.draw(task, 20_000, 1, cache=False), cache=False
    )
    t0 = time.perf_counter()
    dynamics.run(
        tab,
        0.0,
        PAPER.v0,
        PAPER.lr,
        10**6,
        dynamics.log_steps(10**6),
        cache=False,
    )
    t_dyn = time.perf_counter() - t0
    return {
        "budgets": {
            "theory constants, 2e5 samples": round(t_const, 2),
            "reduced dynamics, 1e6 steps": round(t_dyn, 2),
        },
        "bench": [bench.compare(loops=loops) for loops in (10, 1)],
    }


def main(argv: list[str]) -> int:
    only_library = "--library" in argv
    argv = [a for a in argv if a != "--library"]
    notebooks = (
        []
        if only_library
        else [Path(a).resolve() for a in argv]
        or sorted((ROOT / "book").glob("*.ipynb"))
    )
    keep = OUT.exists() and (argv or only_library)
    data = json.loads(OUT.read_text()) if keep else {"chapters": {}}
    over = 0
    for nb in notebooks:
        with tempfile.TemporaryDirectory(
            prefix="lnpower-cold-cache-"
        ) as cache:
            cold = run(nb, Path(cache))
            warm = run(nb, Path(cache))
        times = {"cold": round(cold, 1), "warm": round(warm, 1)}
        late = False
        budget = settings(nb).get("budget", BUDGET)
        # the report is held to no budget: alone and cold, it measures every
        # claim of the book
        if budget is None:
            data["report"] = times
        else:
            times["budget"] = budget
            data["chapters"][nb.stem] = times
            late = cold > times["budget"]
            over += late
        print(
            f"{nb.stem:>24}: cold {cold:6.1f} s, warm {warm:6.1f} s"
            + ("  OVER the budget" if late else ""),
            flush=True,
        )
    if only_library or not argv:
        data["library"] = lib = library()
        for what, sec in lib["budgets"].items():
            over += sec > LIBRARY_BUDGET
            print(
                f"{what}: {sec:.1f} s"
                + ("  OVER the budget" if sec > LIBRARY_BUDGET else "")
            )
        for r in lib["bench"]:
            over += r["speedup"] <= 1
            print(
                f"bench, {r['model']}: {r['speedup']:.2f}x the naive "
                "reference, "
                f"{100 * r['efficiency']:.0f} % of the matmul peak"
            )
    data["date"] = datetime.date.today().isoformat()
    data["machine"] = f"{platform.machine()}, {os.cpu_count()} cores"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
