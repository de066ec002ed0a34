"""nbval runs every notebook alone, the way Colab sees it, and the book
reuses those runs.

1. Each notebook is copied alone into an empty temporary folder and run
   there by nbval (``--nbval-lax``: every cell must run without error; the
   stored notebooks have no outputs to compare) in a fresh kernel of this
   environment. ``make`` installs ``lnpower`` into it from a wheel, so a
   notebook can lean on nothing in the repository.
2. The outputs nbval received are stored in the book's execution cache
   (``_build/.jupyter_cache``, which ``execute_notebooks: cache`` reads), so
   the strict build that follows renders them instead of executing every
   notebook a second time. A notebook with a failed cell is not stored; the
   build then executes it itself (and fails the same way). A cache filled by
   an older library is dropped first, and a complete run stamps the cache
   with a hash of this library (``lnbook.book_cache``).

The trained-run cache (``$LNPOWER_CACHE`` or ``~/.cache/lnpower``) is shared
with the other tests; the reproduction report runs last, alone, so that it
finds the claims the chapters measured (every claim is checked in its
chapter, so the report only reads them). The other notebooks run ``--jobs``
at a time (default 2, the machine's cores), longest first, each kernel on
one thread: their models are small, so a kernel gains little from a second
thread and two kernels nearly halve the wall-clock time.

Usage: ``python -m lnbook.notebooks [--jobs N] [notebook.ipynb ...]``;
exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat
import pytest
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from lnbook import ROOT, back_matter, book_cache

CACHE = ROOT / "_build" / ".jupyter_cache"
RUN = (
    ROOT / "_build" / "nbval_run.json"
)  # the whole run's wall-clock time, for the status page
NO_RUN = {
    "nb": None,
    "ok": 0,
    "failed": 1,
    "seconds": 0.0,
}  # a notebook that did not run
# a guard against a hung kernel, not a budget (the status page holds the
# budgets): under a seed base (LNPOWER_SEED) other than 0, 1 and 2, for which
# the looped model's seed ensemble is stored, experiments_looped's second cell
# trains it (252 s alone on one thread from an empty cache, 2026-12-05), and a
# busy machine must not fail it
CELL_TIMEOUT = 1200


def expected_seconds() -> dict[str, float]:
    """Each notebook's last measured time from an empty cache
    (``book/_data/chapter_times.json``): the notebooks run longest first, so
    that the two lanes finish close together. A notebook not measured yet
    runs after the measured ones."""
    path = ROOT / "book" / "_data" / "chapter_times.json"
    if not path.exists():
        return {}
    data = json.loads(path.read_text())["chapters"]
    return {name: t["cold"] for name, t in data.items()}


class Recorder:
    """A pytest plugin that writes the outputs of every cell nbval runs into
    its notebook."""

    def __init__(self):
        self.runs: dict[Path, dict] = {}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        from nbval.plugin import (
            IPyNbCell,
        )  # imported by pytest itself, not before

        if not isinstance(item, IPyNbCell):
            return (yield)
        run = self.runs.setdefault(
            Path(item.parent.path),
            {"nb": item.parent.nb, "ok": 0, "failed": 0, "seconds": 0.0},
        )
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
    """Put a complete, successful run into the book's execution cache under
    ``source``."""
    nb = run["nb"]
    code = sum(c.cell_type == "code" for c in nb.cells)
    if run["failed"] or run["ok"] != code:
        return False
    nbformat.validate(nb)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    get_cache(str(CACHE)).cache_notebook_bundle(
        CacheBundleIn(
            nb, str(source), data={"execution_seconds": run["seconds"]}
        ),
        check_validity=False,
        overwrite=True,
    )
    return True


def run_alone(notebook: Path, out: Path) -> int:
    """nbval on ``notebook``, copied alone into an empty folder; its run
    (the executed notebook and its counts) is written to ``out`` as JSON.
    Returns pytest's exit code."""
    recorder = Recorder()
    with tempfile.TemporaryDirectory(prefix="lnpower-nbval-") as tmp:
        work = Path(tmp)
        # the kernel's IPython folder, with the startup file that hides a
        # value after a closing ";" (lnbook.semicolon)
        startup = work / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        shutil.copy(Path(__file__).with_name("semicolon.py"), startup)
        os.environ["IPYTHONDIR"] = str(work / "ipython")
        (work / "pytest.ini").write_text(
            "[pytest]\naddopts = -p no:cacheprovider\n"
        )
        alone = work / notebook.stem / notebook.name
        alone.parent.mkdir()
        shutil.copy(notebook, alone)
        code = pytest.main(
            [
                "-q",
                "-c",
                str(work / "pytest.ini"),
                "--rootdir",
                str(work),
                "--nbval-lax",
                "--nbval-current-env",
                f"--nbval-cell-timeout={CELL_TIMEOUT}",
                str(alone),
            ],
            plugins=[recorder],
        )
        run = recorder.runs.get(alone, NO_RUN)
    out.write_text(
        json.dumps({**run, "nb": run["nb"] and nbformat.writes(run["nb"])})
    )
    return int(code)


def launch(
    notebook: Path, tmp: Path, threads: int | None
) -> tuple[Path, dict, str]:
    """Run one notebook in a child process (``threads`` per kernel); its run
    and its log."""
    out = tmp / f"{notebook.stem}.json"
    env = dict(os.environ)
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    proc = subprocess.run(
        [sys.executable, __file__, "--alone", str(out), str(notebook)],
        env=env,
        capture_output=True,
        text=True,
    )
    run = json.loads(out.read_text()) if out.exists() else dict(NO_RUN)
    if run["nb"]:
        run["nb"] = nbformat.reads(run["nb"], as_version=4)
    if proc.returncode and not run["failed"]:
        run["failed"] = 1
    return notebook, run, proc.stdout + proc.stderr


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="chapters run at a time (default 2)",
    )
    p.add_argument(
        "--alone", type=Path, help=argparse.SUPPRESS
    )  # a child: one notebook
    p.add_argument("notebooks", nargs="*", type=Path)
    args = p.parse_args(argv)
    if args.alone:
        return run_alone(args.notebooks[0].resolve(), args.alone)
    notebooks = [n.resolve() for n in args.notebooks] or sorted(
        (ROOT / "book").glob("*.ipynb")
    )
    last, expected = back_matter(), expected_seconds()
    chapters = sorted(
        (n for n in notebooks if n.stem not in last),
        key=lambda n: -expected.get(n.stem, 0),
    )
    back = [n for n in notebooks if n.stem in last]
    book_cache.drop_stale()  # outputs of an older library must not stay
    t0 = time.perf_counter()
    failed = 0

    def report(
        source: Path, run: dict, log: str
    ) -> None:  # in this thread: one cache writer
        nonlocal failed
        stored = run["nb"] is not None and store(run, source)
        failed += not stored
        if not stored:
            print(log)
        print(
            f"{'ok  ' if stored else 'FAIL'} {source.name}: {run['ok']} cells "
            "in "
            f"{run['seconds']:.0f} s"
            + (", cached for the book" if stored else ""),
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="lnpower-runs-") as tmp:
        threads = 1 if args.jobs > 1 else None
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            for done in as_completed(
                [pool.submit(launch, n, Path(tmp), threads) for n in chapters]
            ):
                report(*done.result())
        for n in (
            back
        ):  # after every chapter: the report reads the claims they measured
            report(*launch(n, Path(tmp), None))
    wall = time.perf_counter() - t0
    print(
        f"nbval over {len(notebooks)} notebooks, {args.jobs} at a time: "
        f"{wall:.0f} s"
    )
    if not args.notebooks and not failed:  # every output is this library's
        book_cache.stamp()
    if (
        not args.notebooks
    ):  # the whole book: the status page shows the wall-clock time
        RUN.write_text(
            json.dumps(
                {
                    "wall_seconds": round(wall, 1),
                    "jobs": args.jobs,
                    "notebooks": len(notebooks),
                    "failed": failed,
                }
            )
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
