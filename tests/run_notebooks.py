"""nbval runs every notebook alone, the way Colab sees it, and the book reuses those runs.

1. Each notebook is copied alone into an empty temporary folder and run there by nbval
   (``--nbval-lax``: every cell must run without error; the stored notebooks have no outputs
   to compare) in a fresh kernel of this environment. ``make`` installs ``lnpower`` into it
   from a wheel, so a notebook can lean on nothing in the repository.
2. The outputs nbval received are stored in the book's execution cache
   (``_build/.jupyter_cache``, which ``execute_notebooks: cache`` reads), so the strict build
   that follows renders them instead of executing every notebook a second time. A notebook
   with a failed cell is not stored; the build then executes it itself (and fails the same
   way).

The trained-run cache (``$LNPOWER_CACHE`` or ``~/.cache/lnpower``) is shared with the other
tests; the chapters run first and the back matter last, so that the reproduction report finds
the claims the chapters measured. Usage: ``python tests/run_notebooks.py [notebook.ipynb ...]``;
exits non-zero on any failure.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / ".jupyter_cache"
# run last: the report reads the claims the chapters have measured (lnpower.claims.check)
BACK_MATTER = ("reproduction", "status")


class Recorder:
    """A pytest plugin that writes the outputs of every cell nbval runs into its notebook."""

    def __init__(self):
        self.runs: dict[Path, dict] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        from nbval.plugin import IPyNbCell  # imported by pytest itself, not before

        if not isinstance(item, IPyNbCell):
            return (yield)
        run = self.runs.setdefault(Path(item.parent.path),
                                   {"nb": item.parent.nb, "ok": 0, "failed": 0, "seconds": 0.0})
        t0 = time.perf_counter()
        try:
            result = yield
        except BaseException:
            run["failed"] += 1
            raise
        finally:
            run["seconds"] += time.perf_counter() - t0
        run["ok"] += 1
        item.cell.outputs = [nbformat.from_dict(o) for o in item.test_outputs]
        item.cell.execution_count = run["ok"]
        return result


def store(run: dict, source: Path) -> bool:
    """Put a complete, successful run into the book's execution cache under ``source``."""
    nb = run["nb"]
    code = sum(c.cell_type == "code" for c in nb.cells)
    if run["failed"] or run["ok"] != code:
        return False
    nbformat.validate(nb)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    get_cache(str(CACHE)).cache_notebook_bundle(
        CacheBundleIn(nb, str(source), data={"execution_seconds": run["seconds"]}),
        check_validity=False, overwrite=True)
    return True


def main(argv: list[str]) -> int:
    notebooks = [Path(a).resolve() for a in argv] or sorted(
        (ROOT / "book").glob("*.ipynb"), key=lambda p: (p.stem in BACK_MATTER, p.stem))
    t0 = time.perf_counter()
    recorder = Recorder()
    with tempfile.TemporaryDirectory(prefix="lnpower-nbval-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
        copies = {}
        for nb in notebooks:
            alone = work / nb.stem
            alone.mkdir()
            shutil.copy(nb, alone / nb.name)
            copies[alone / nb.name] = nb
        code = pytest.main(["-q", "-c", str(work / "pytest.ini"), "--rootdir", str(work),
                            "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600",
                            *map(str, copies)], plugins=[recorder])
        for copy, source in copies.items():
            run = recorder.runs.get(copy, {"nb": None, "ok": 0, "failed": 1, "seconds": 0.0})
            stored = run["nb"] is not None and store(run, source)
            print(f"{'ok  ' if stored else 'FAIL'} {source.name}: {run['ok']} cells in "
                  f"{run['seconds']:.0f} s" + (", cached for the book" if stored else ""))
    print(f"nbval over {len(notebooks)} notebooks: {time.perf_counter() - t0:.0f} s")
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
