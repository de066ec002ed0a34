"""Every chapter's problem set grades as it should, with the problem set
alone in an empty folder.

Each teaching chapter ``book/NAME.ipynb`` has its graded problem set in a
companion notebook ``book/NAME_problems.ipynb``; the chapter itself holds no
graded part, test or answer cell. For each problem set, three kinds of
edition are graded with its tests, its set-up executed once
(``grading.grade_editions``):

With ``--reader VENV`` every edition runs in a kernel of that environment,
which holds only the reader's package (``make coursework`` builds it from the
wheel and the lock): a problem set must run where a student runs it.

- the instructor edition (the problem set itself): full marks, at least 4
  graded
  parts and 8 points, no error anywhere;
- the student edition (``python -m lnbook assignments student``): zero,
  every part "not attempted", every cell outside the exercises still
  runs, and no test, visible or hidden, meets an undefined name (each stub
  binds its part's answers);
- seeded wrong answers (:data:`WRONG`, which every problem set needs: a
  factor of 2 off, a transposed matrix, the unnormalised target, ...): the
  part scores strictly between zero and full, or zero with the expected
  message, and every other part keeps full marks.

Static checks too: each exercise title states its graded parts' points, the
course plan (book/course.md) states each chapter's parts and points, and no
teaching chapter contains grading scaffolding.

Then, for the chapters in ``--otter`` (default: transformer; ``all`` for
every chapter), the Otter export is built (``python -m lnbook assignments
otter``, which runs ``otter assign``) and ``otter run`` grades, with no
container, the solution notebook (full marks, the same maximum as ours) and
the student notebook (zero). Chapters are graded two at a time (``--jobs``),
each in its own kernel.

Usage: ``python -m lnbook.coursework [--otter all|none|NAME,...]
[--jobs N] [problem set ...]``; exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

import nbformat

from lnbook import ROOT, editions, exercises, grading, otter

COURSE = ROOT / "book" / "course.md"

MIN_PARTS, MIN_POINTS = 4, 8
SCAFFOLDING = {"solution", "test", "answer"}  # cell tags of a problem set


def chapter_of(problems: Path) -> str:
    """The teaching chapter of a problem set: ``with_ln_problems`` ->
    ``with_ln``."""
    return problems.stem.removesuffix("_problems")


# seconds to grade each chapter after nbval (one thread each, 2026-12-01): the
# longest start first (the Otter round trip, about 27 s, starts before all of
# them)
SECONDS = {
    "principal_components": 25,
    "without_ln": 17,
    "looped_power_method": 17,
    "out_of_distribution": 14,
    "with_ln": 14,
    "transformer": 12,
    "beyond": 11,
}

# (part, wrong source, expected): "partial" (strictly between zero and the
# part's points) or a message that a failed test must show (the part then
# scores zero)
WRONG = {
    "principal_components": [
        (
            "ex-pcp-moments-b",
            "import sympy as sp\n\nn_sym, d_sym = sp.symbols('n d')\n"
            "ex3_m3_task1 = (n_sym + n_sym * (n_sym - 1) / d_sym\n"
            "    + n_sym * (n_sym - 1) * (n_sym - 2) / d_sym**2) / d_sym",
            "3n(n-1)/d",
        ),
        (
            "ex-pcp-power",
            "def power_method(S, a, L):\n    y = torch.linalg.matrix_power(S, "
            "L) "
            "@ a\n    return y / torch.linalg.vector_norm(y)",
            "partial",
        ),
    ],
    "transformer": [
        (  # the columns' formula in rows, W and V not transposed
            "ex-tf-layer",
            "def rms_looped(H, W, V, L):\n    for _ in range(L):\n"
            "        Z = H + H @ W @ H.mT @ H @ V\n"
            "        H = Z / Z.pow(2).mean(dim=-1, keepdim=True).sqrt()\n"
            "    return H",
            "partial",
        ),
        (
            "ex-tf-limit",
            "import sympy as sp\n\nr, l1, l2 = sp.symbols('rho lambda1 "
            "lambda2')\n"
            "ex5_R_correction = 2 * (l1 - l2) / (r * l1**2)",
            "(lambda1 - lambda2)/(rho lambda1^2)",
        ),
    ],
    "looped_power_method": [
        (
            "ex-looped-cl-a",
            "import sympy as sp\n\nl1, l2, c1, c2, L = sp.symbols("
            "'lambda1 lambda2 c1 c2 L', positive=True)\n"
            "ex2_c = 2 * L * c1**2 * c2**2 * (l1 - l2) / (c1**2 + c2**2)**2",
            "check the sign",
        ),
        (
            "ex-looped-increment",
            "import sympy as sp\n\neta, c, d, D = sp.symbols('eta cL d D')\n"
            "ex3_increment = eta * c * D**2 / (2 * d)",
            "the eta^2 term of the step counts",
        ),
    ],
    "without_ln": [
        (
            "ex-noln-mc",
            "def imitation_optimum(sample, g):\n"
            "    q, s = sample.q, sample.s\n"
            "    h = np.sqrt(1 + 2 * q + s**2)\n"
            "    k1, k2 = q.mean(), (s**2).mean()\n"
            "    n1 = ((1 + g * q) / h).mean()\n"
            "    n2 = ((q + g * s**2) / h).mean()\n"
            "    return (n2 - k1) / k2, 2 - 2 * n1 - (n2 - k1) ** 2 / k2",
            "partial",
        ),
        (  # the scale c kept at 1: the chapter's shape with kappa3 -> nu2
            "ex-noln-gamma1",
            "import sympy as sp\n\nn1, n2, k1, k2 = sp.symbols('nu1 nu2 "
            "kappa1 kappa2')\nex2_gamma = (n2 - k1) / k2\n"
            "ex2_loss = 2 - 2 * n1 - (n2 - k1) ** 2 / k2",
            "with c = 1 fixed",
        ),
    ],
    "with_ln": [
        (
            "ex-ln-next-a",
            "def C1p_estimate(sample):\n    s, q = sample.s, sample.q\n"
            "    return 4 * (q * (s**2 - q**2) / s**6).mean() / sample.task.d",
            "the factor 3",
        ),
        (
            "ex-ln-increment-a",
            "import sympy as sp\n\neta, C, D = sp.symbols('eta C D')\n"
            "ex2_increment = 3 * eta * C * D**2 / 2",
            "3 eta C D^2/4",
        ),
    ],
    "out_of_distribution": [
        (
            "ex-ood-tight",
            "def asymptote(X, a):\n    lam, vec = torch.linalg.eigh(X @ "
            "X.T)\n    lam, vec = lam.flip(0), vec.flip(1)\n    c = vec.T @ "
            "a\n    r = int((lam >= lam[0] * (1 - 1e-8)).sum())\n"
            "    return (c[r].abs() / c[:r].norm()).item()",
            "partial",
        ),
        (
            "ex-ood-R-a",
            "import sympy as sp\n\ng = sp.Symbol('gamma')\n"
            "ex2_R = (1 + 2 * g) / (1 + 3 * g)",  # the paper's n = 32
            "(1 + 4 gamma)/(1 + 5 gamma)",
        ),
        (
            "ex-ood-noln-a",
            "import sympy as sp\n\nl1, k1, k2 = sp.symbols("
            "'lambda1 kappa1 kappa2')\n"
            "ex3_loop_ratio = k2 / ((k2 - k1) * l1)",
            "(1 + gamma lambda1)/(gamma lambda1)",
        ),
    ],
    "beyond": [
        (
            "ex-beyond-align",
            "def alignment(W, V):\n    A = model.blocks(W)['12']\n"
            "    B = model.blocks(V)['21']\n    return (A * B).sum().item() / "
            "(A.norm() * B.norm()).item()",
            "partial",
        ),
        (
            "ex-beyond-excess-a",
            "import sympy as sp\n\nb, gamma = sp.symbols('b gamma')\n"
            "ex3_excess = b / (9 * gamma)",
            "check the sign",
        ),
    ],
}


def check_outcomes(chapter: str, res: dict, qs: list) -> list[str]:
    problems = []
    if res["errors_in_body"]:
        problems += [f"error in the body: {e}" for e in res["errors_in_body"]]
    inst, stud = res["instructor"], res["student"]
    if inst["score"] != inst["max_score"]:
        problems += [
            f"instructor: {q['question']} {q['score']}/{q['max_score']}: "
            f"{' | '.join(q['messages'])[:400]}"
            for q in inst["questions"]
            if q["score"] != q["max_score"]
        ]
    if inst["max_score"] < MIN_POINTS or len(qs) < MIN_PARTS:
        problems.append(f"only {len(qs)} parts and {inst['max_score']} points")
    problems += [
        f"instructor: error in a reference answer: {e}"
        for e in inst["errors_in_answers"]
    ]
    for name in ("instructor", "student"):
        problems += [
            f"{name}: error outside the parts: {e}"
            for e in res[name]["errors_outside"]
        ]
    if stud["score"] != 0:
        problems.append(f"student edition scores {stud['score']}")
    problems += [
        f"student: {q['question']} is {q['status']}"
        for q in stud["questions"]
        if q["status"] != "not attempted"
    ]
    problems += [  # every stub binds its answers: no test meets a NameError
        f"student: a test of {q['question']} meets an undefined name: "
        f"{' | '.join(q['messages'])[:300]}"
        for q in stud["questions"]
        if "NameError" in " ".join(q["messages"])
    ]
    if chapter not in WRONG:  # a test that cannot fail is no test
        problems.append(
            f"no seeded wrong answers for {chapter} (lnbook.coursework.WRONG)"
        )
    for k, (part, _src, expected) in enumerate(WRONG.get(chapter, [])):
        r = res[f"wrong-{k}"]
        by = {q["question"]: q for q in r["questions"]}
        q = by[part]
        others = [
            o
            for o in r["questions"]
            if o["question"] != part and o["score"] != o["max_score"]
        ]
        if others:
            problems.append(
                f"wrong-{k} ({part}): other parts lost points: "
                f"{[o['question'] for o in others]}"
            )
        msg = " ".join(q["messages"])
        if expected == "partial":
            if not 0 < q["score"] < q["max_score"]:
                problems.append(
                    f"wrong-{k} ({part}): expected partial credit, got "
                    f"{q['score']}/{q['max_score']}: {msg[:300]}"
                )
        elif q["score"] != 0 or expected not in msg:
            problems.append(
                f"wrong-{k} ({part}): expected 0 and the message "
                f"{expected!r}, "
                f"got {q['score']}/{q['max_score']}: {msg[:300]}"
            )
    return problems


def static_problems(chapter: Path, qs: list, nb) -> list[str]:
    """Checks that need no kernel: every exercise title states the points of
    its graded parts (``N points``, or ``N + W points`` with W the written
    part's, graded by hand: every rubric's points appear as W), the course
    plan's table states each chapter's parts and points, and the chapter
    holds no grading cell."""
    problems = []
    by_exercise: dict = {}
    for q in qs:
        by_exercise.setdefault(q.exercise, []).append(q)
    for cell in nb.cells:
        for title, label in exercises.EXERCISE.findall(cell.source):
            stated = re.search(r"(\d+)(?: \+ (\d+))? points?\)", title)
            points = sum(q.points for q in by_exercise.get(label, []))
            graded = float(stated.group(1)) if stated else 0.0
            if graded != points:
                problems.append(
                    f"{label}: the title says {title!r}, the tests give "
                    f"{points:g}"
                )
            rubric = re.search(r"\*Rubric[^*]*\((\d+) points?\)", cell.source)
            written = stated.group(2) if stated else None
            if (rubric and rubric.group(1)) != written:
                problems.append(
                    f"{label}: the title's written points ({written}) are "
                    f"not its rubric's "
                    f"({rubric.group(1) if rubric else None})"
                )
    rows = [
        r
        for r in COURSE.read_text().splitlines()
        if r.startswith("|")
        and len(r.split("|")) > 6
        and f"{{doc}}`{chapter_of(chapter)}`" in r.split("|")[2]
    ]
    teaching = nbformat.read(
        chapter.with_name(f"{chapter_of(chapter)}.ipynb"), as_version=4
    )
    scaffolding = [
        i
        for i, c in enumerate(teaching.cells)
        if SCAFFOLDING & set(c.get("metadata", {}).get("tags", []))
        or exercises.is_test(c)
    ]
    if scaffolding or exercises.questions(teaching):
        problems.append(
            f"{chapter_of(chapter)}: grading cells in the chapter "
            f"({scaffolding}); they belong in {chapter.name}"
        )
    if len(rows) != 1:
        return problems + [
            f"course.md: expected one row for {chapter_of(chapter)}, found "
            f"{len(rows)}"
        ]
    parts, points = (c.strip() for c in rows[0].split("|")[4:6])
    total = sum(q.points for q in qs)
    if (int(parts), float(points)) != (len(qs), total):
        problems.append(
            f"course.md says {parts} parts and {points} points, the chapter "
            "has "
            f"{len(qs)} and {total:g}"
        )
    return problems


def reader_kernel(venv: Path, folder: Path) -> str:
    """A kernel spec, in ``folder`` (put on ``JUPYTER_PATH``), that runs
    the Python of the environment ``venv``, which holds only what ``pip
    install lnpower`` brings and ipykernel (``make`` builds it): the problem
    sets must run where a student runs them. Returns its name."""
    spec = folder / "kernels" / "lnpower-reader"
    spec.mkdir(parents=True)
    python = str(Path(venv).resolve() / "bin" / "python")
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": argv,
                "display_name": "lnpower only",
                "language": "python",
                "env": {"PYTHONPATH": ""},  # not the book's tooling
            }
        )
    )
    paths = [str(folder), *filter(None, [os.environ.get("JUPYTER_PATH")])]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(paths)
    return "lnpower-reader"


def grade_chapter(
    chapter: Path, work: Path, kernel: str = "python3"
) -> tuple[str, list[str], dict]:
    alone = work / chapter.stem
    alone.mkdir()
    shutil.copy(chapter, alone / chapter.name)
    src = nbformat.read(alone / chapter.name, as_version=4)
    qs = exercises.questions(src)
    versions = {"instructor": src, "student": editions.student_edition(src)}
    for k, (part, source, _) in enumerate(WRONG.get(chapter_of(chapter), [])):
        versions[f"wrong-{k}"] = editions.with_answer(src, part, source)
    # a body cell may train the paper's models when the cache is cold: allow it
    # an hour
    res = grading.grade_editions(
        alone / chapter.name,
        versions,
        timeout=600,
        body_timeout=3600,
        kernel=kernel,
    )
    problems = static_problems(chapter, qs, src) + check_outcomes(
        chapter_of(chapter), res, qs
    )
    summary = {
        "parts": len(qs),
        "points": res["instructor"]["max_score"],
        "cpu": res["kernel_cpu_seconds"],
        "scores": {
            k: v["score"] for k, v in res.items() if isinstance(v, dict)
        },
    }
    return chapter.stem, problems, summary


def otter_chapter(chapter: Path, work: Path) -> list[str]:
    """``python -m lnbook assignments otter`` (which runs otter assign),
    then otter run on the solution notebook (full marks, our maximum) and on
    the student notebook (zero)."""
    folder = work / f"otter-{chapter.stem}"
    folder.mkdir()
    shutil.copy(chapter, folder / chapter.name)
    cli = [sys.executable, "-m", "lnbook", "assignments"]
    r = subprocess.run(
        [
            *cli,
            "otter",
            str(folder / chapter.name),
            "--out",
            str(folder / "out"),
            "--json",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return [f"otter export failed: {r.stderr[-2000:]}"]
    (entry,) = json.loads(r.stdout)["chapters"]
    points = sum(
        q.points
        for q in exercises.questions(nbformat.read(chapter, as_version=4))
    )
    problems = []
    full = otter.run(
        entry["autograder"], entry["autograder_notebook"], folder / "full"
    )
    if not full["score"] == full["max_score"] == points:
        problems.append(
            f"otter run, solutions: {full['score']}/{full['max_score']} "
            f"(ours: {points}): {full['questions']}"
        )
    zero = otter.run(entry["autograder"], entry["student"], folder / "zero")
    if zero["score"] != 0 or zero["max_score"] != points:
        problems.append(
            f"otter run, student: {zero['score']}/{zero['max_score']}"
        )
    problems.insert(
        0,
        f"(otter: solutions {full['score']:g}/{full['max_score']:g}, student "
        f"{zero['score']:g}/{zero['max_score']:g})",
    )
    return problems


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "chapters",
        nargs="*",
        help="problem set notebooks (default: every book/*_problems.ipynb)",
    )
    p.add_argument(
        "--otter",
        default="transformer",
        help="chapters for the Otter round trip: all, none or NAME,NAME "
        "(default: transformer)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=2,
        help="chapters graded at once (default 2)",
    )
    p.add_argument(
        "--reader",
        type=Path,
        default=None,
        metavar="VENV",
        help="grade in a kernel of this environment, which holds only the "
        "reader's package (default: this Python's kernel)",
    )
    args = p.parse_args(argv)
    chapters = [Path(a).resolve() for a in args.chapters] or sorted(
        (ROOT / "book").glob("*_problems.ipynb")
    )
    names = {chapter_of(c) for c in chapters}
    with_otter = (
        names
        if args.otter == "all"
        else set()
        if args.otter == "none"
        else set(args.otter.split(",")) & names
    )
    # one thread per kernel: two kernels of two threads only wait on each other
    if args.jobs > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    t_all = time.perf_counter()
    failures = 0

    def grade(chapter, work):
        t0 = time.perf_counter()
        name, problems, s = grade_chapter(chapter, work, kernel)
        cpu = f", kernel CPU {s['cpu']:.0f} s" if s["cpu"] is not None else ""
        return (
            f"{name}: {s['parts']} parts, {s['points']:g} points; scores "
            f"{s['scores']} "
            f"({time.perf_counter() - t0:.0f} s{cpu})"
        ), problems

    def round_trip(chapter, work):
        t0 = time.perf_counter()
        problems = otter_chapter(chapter, work)
        note = (
            problems.pop(0)
            if problems and problems[0].startswith("(otter")
            else ""
        )
        return (
            f"{chapter.stem}: otter assign and otter run {note} "
            f"({time.perf_counter() - t0:.0f} s)"
        ), problems

    with tempfile.TemporaryDirectory(prefix="lnpower-coursework-") as tmp:
        kernel = "python3"
        if args.reader is not None:
            if not (args.reader / "bin" / "python").exists():
                print(f"no environment at {args.reader}", file=sys.stderr)
                return 2
            kernel = reader_kernel(args.reader, Path(tmp) / "jupyter")
        jobs = [
            (round_trip, c) for c in chapters if chapter_of(c) in with_otter
        ] + [
            (grade, c)
            for c in sorted(
                chapters, key=lambda c: -SECONDS.get(chapter_of(c), 0)
            )
        ]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(f, c, Path(tmp)) for f, c in jobs]
            for fut in as_completed(futures):
                try:
                    line, problems = fut.result()
                # report and count, then go on
                except Exception as err:  # noqa: BLE001
                    line, problems = (
                        "a job crashed",
                        [f"{type(err).__name__}: {err}"],
                    )
                print(("FAIL " if problems else "ok   ") + line, flush=True)
                for prob in problems:
                    print("     " + prob)
                failures += bool(problems)
    print(
        f"coursework: {len(jobs) - failures} passed, {failures} failed "
        f"({time.perf_counter() - t_all:.0f} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
