"""Each chapter alone, cold and warm: what a reader meets on a first run in Colab.

For every notebook (or those named): copy it alone into an empty folder and execute it in a
fresh kernel with an *empty* training cache (cold), then once more with the cache that run
filled (warm). Writes ``book/_data/chapter_times.json``, which the status page shows against
the 90 s budget. Run it on a quiet machine: it measures wall-clock time.

Usage: ``python tests/chapter_times.py [book/chapter.ipynb ...]``; exits non-zero if a
notebook fails or a cold run is over the budget.
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

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "book" / "_data" / "chapter_times.json"
BUDGET = 90.0
# the reproduction report reads the claims the chapters measured; run alone from an empty
# cache it measures all of them itself, so it is timed but held to no chapter's budget
REPORT = "reproduction"


def run(notebook: Path, cache: Path) -> float:
    """Seconds to execute ``notebook`` alone in an empty folder with ``cache``."""
    with tempfile.TemporaryDirectory(prefix="lnpower-chapter-") as tmp:
        copy = Path(tmp) / notebook.name
        shutil.copy(notebook, copy)
        nb = nbformat.read(copy, as_version=4)
        os.environ.update(LNPOWER_CACHE=str(cache), LNPOWER_PROGRESS="0")
        t0 = time.perf_counter()
        NotebookClient(nb, timeout=1200, kernel_name="python3",
                       resources={"metadata": {"path": tmp}}).execute()
        return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    notebooks = [Path(a).resolve() for a in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    data = json.loads(OUT.read_text()) if OUT.exists() and argv else {"chapters": {}}
    over = 0
    for nb in notebooks:
        with tempfile.TemporaryDirectory(prefix="lnpower-cold-cache-") as cache:
            cold = run(nb, Path(cache))
            warm = run(nb, Path(cache))
        times = {"cold": round(cold, 1), "warm": round(warm, 1)}
        if nb.stem == REPORT:  # not a chapter: alone and cold, it measures every claim itself
            data["report"] = times
        else:
            data["chapters"][nb.stem] = times
            over += cold > BUDGET
        print(f"{nb.stem:>24}: cold {cold:6.1f} s, warm {warm:6.1f} s"
              + ("  OVER the budget" if cold > BUDGET and nb.stem != REPORT else ""),
              flush=True)
    data["date"] = datetime.date.today().isoformat()
    data["machine"] = f"{platform.machine()}, {os.cpu_count()} cores"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
