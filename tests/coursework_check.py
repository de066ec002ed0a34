"""Every chapter's coursework grades as it should, with the chapter alone in an empty folder.

For each chapter with a coding exercise, write its student edition
(``python -m lnpower assignments student``) and grade it (``python -m lnpower assignments
grade``): every exercise must come back "not attempted" (each stub raises, so each check fails)
and every cell outside the exercises must still run. The instructor editions are the notebooks
themselves, which ``tests/run_notebooks.py`` runs under nbval: all of their checks must pass.

Usage: ``python tests/coursework_check.py [chapter.ipynb ...]``; exits non-zero on any failure.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def has_exercise(notebook: Path) -> bool:
    return '"check"' in notebook.read_text()


def grade_student_edition(notebook: Path, work: Path) -> tuple[str, list[str]]:
    """Grade ``notebook``'s student edition, alone in a folder of ``work``; the problems found."""
    alone = work / notebook.stem
    alone.mkdir()
    shutil.copy(notebook, alone / notebook.name)
    lnpower = [sys.executable, "-m", "lnpower", "assignments"]
    subprocess.run([*lnpower, "student", alone / notebook.name, "--out", alone / "student"],
                   check=True, capture_output=True, cwd=alone)
    out = subprocess.run([*lnpower, "grade", alone / "student" / notebook.name, "--json",
                          "--timeout", "600"], capture_output=True, text=True, cwd=alone)
    if out.returncode != 0:
        return notebook.name, [f"grader failed: {out.stderr[-2000:]}"]
    r = json.loads(out.stdout)
    problems = [f"error outside the exercises: {e}" for e in r["errors_outside"]]
    if r["max_score"] == 0:
        problems.append("no coding exercise found")
    problems += [f"{e['exercise']}: {e['status']} ({e['message'][:300]})"
                 for e in r["exercises"] if e["status"] != "not attempted"]
    return f"{notebook.name} ({len(r['exercises'])} exercises)", problems


def main(argv: list[str]) -> int:
    chapters = [Path(a).resolve() for a in argv] or sorted((ROOT / "book").glob("*.ipynb"))
    chapters = [c for c in chapters if has_exercise(c)]
    t0 = time.perf_counter()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="lnpower-coursework-") as tmp:
        for chapter in chapters:
            name, problems = grade_student_edition(chapter, Path(tmp))
            print(("FAIL " if problems else "ok   ") + name, flush=True)
            for p in problems:
                print("     " + p)
            failures += bool(problems)
    print(f"student editions: {len(chapters) - failures} passed, {failures} failed "
          f"({time.perf_counter() - t0:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
