"""Every chapter runs alone, the way Colab sees it, and its coursework grades as it should.

1. Build a wheel of ``lnpower``; create a fresh virtual environment outside the repository with
   only the lock and the wheel.
2. Copy each chapter notebook alone into an empty temporary folder and grade it there with the
   fresh environment's ``python -m lnpower assignments grade``: the instructor edition must get
   full marks with no error anywhere.
3. Write each chapter's student edition and grade it: every exercise must come back "not
   attempted" (each stub raises, so each check fails) and every cell outside the exercises
   must still run.

The trained-run cache (``$LNPOWER_CACHE`` or ``~/.cache/lnpower``) is shared with the other
tests, so runs are trained once per machine. Usage: ``python tests/standalone_chapters.py
[--jobs N] [chapter.ipynb ...]``; exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sh(*cmd, **kw):
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True, text=True, **kw)


def fresh_env(work: Path) -> Path:
    wheels = work / "wheel"
    sh(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", wheels, ROOT)
    (wheel,) = wheels.glob("lnpower-*.whl")
    env = work / "venv"
    sh(sys.executable, "-m", "venv", env)
    py = env / "bin" / "python"
    sh(py, "-m", "pip", "install", "-q", "torch==2.13.0")
    sh(py, "-m", "pip", "install", "-q", "-r", ROOT / "requirements.txt")
    sh(py, "-m", "pip", "install", "-q", "--no-deps", wheel)
    return py


def grade(py: Path, notebook: Path, work: Path, student: bool) -> tuple[str, list[str]]:
    alone = Path(tempfile.mkdtemp(dir=work, prefix=notebook.stem + "-"))
    shutil.copy(notebook, alone / notebook.name)
    target = alone / notebook.name
    if student:
        sh(py, "-m", "lnpower", "assignments", "student", target, "--out", alone / "student")
        target = alone / "student" / notebook.name
    out = subprocess.run([py, "-m", "lnpower", "assignments", "grade", target, "--json",
                          "--timeout", "600"], capture_output=True, text=True, cwd=alone)
    edition = "student" if student else "instructor"
    if out.returncode != 0:
        return f"{notebook.name} ({edition})", [f"grader failed: {out.stderr[-2000:]}"]
    r = json.loads(out.stdout)
    problems = [f"error outside the exercises: {e}" for e in r["errors_outside"]]
    if r["max_score"] == 0 and '"check"' in notebook.read_text():
        problems.append("no coding exercise found")
    for e in r["exercises"]:
        want = "not attempted" if student else "passed"
        if e["status"] != want:
            problems.append(f"{e['exercise']}: {e['status']} ({e['message'][:300]})")
    return f"{notebook.name} ({edition}, {r['score']}/{r['max_score']})", problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=Path)
    ap.add_argument("--jobs", type=int, default=1,
                    help="notebooks run at once (more than 1 oversubscribes a 2-core machine)")
    args = ap.parse_args()
    chapters = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="lnpower-standalone-") as tmp:
        work = Path(tmp)
        py = fresh_env(work)
        print(f"fresh environment in {time.perf_counter() - t0:.0f} s", flush=True)
        # pages without coding exercises (the back matter) run once, as they are
        jobs = [(c, s) for c in chapters for s in (False, True)
                if not s or '"check"' in c.read_text()]
        failures = 0
        with ThreadPoolExecutor(args.jobs) as pool:
            for name, problems in pool.map(lambda j: grade(py, j[0], work, j[1]), jobs):
                print(("FAIL " if problems else "ok   ") + name, flush=True)
                for p in problems:
                    print("     " + p)
                failures += bool(problems)
    print(f"{len(jobs) - failures} passed, {failures} failed "
          f"({time.perf_counter() - t0:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
