"""The book's tooling on the command line: ``python -m lnbook bench``,
``assignments {student,grade,otter}`` and ``sync-colab`` (``make`` puts
``tools/`` on ``PYTHONPATH``; the reader's commands are ``python -m
lnpower``'s). Bad input prints one line and exits with status 2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_parsers(sub) -> None:
    """Add ``bench``, ``assignments`` and ``sync-colab`` to the subparsers
    ``sub``."""
    b = sub.add_parser(
        "bench", help="training speed: the engine against naive autograd"
    )
    b.add_argument(
        "--loops",
        type=int,
        default=10,
        help="L of the looped model (default 10)",
    )
    b.add_argument(
        "--repeats",
        type=int,
        default=7,
        help="timed blocks per implementation",
    )
    b.add_argument("--device", default="cpu", help="cpu or cuda")
    b.add_argument(
        "--end-to-end",
        type=int,
        default=0,
        metavar="STEPS",
        help="also time `train` end to end against a plain autograd loop for "
        "STEPS steps (fresh processes, start-up included)",
    )
    _json(b)
    a = sub.add_parser(
        "assignments", help="coursework: student editions, grading, Otter"
    )
    asub = a.add_subparsers(dest="action", required=True)
    st = asub.add_parser(
        "student", help="write the student edition of every chapter"
    )
    st.add_argument("path", help="the book folder (or one notebook)")
    st.add_argument(
        "--out", required=True, help="folder for the student editions"
    )
    _json(st)
    gr = asub.add_parser(
        "grade", help="execute a submitted notebook and grade its exercises"
    )
    gr.add_argument("path", help="the submitted notebook")
    gr.add_argument(
        "--tests",
        default=None,
        metavar="CHAPTER",
        help="the source chapter (instructor edition) whose tests grade the "
        "submission (default: the notebook itself, for an instructor edition)",
    )
    gr.add_argument(
        "--timeout",
        type=int,
        default=300,
        help="seconds per cell (default 300)",
    )
    _json(gr)
    ot = asub.add_parser(
        "otter",
        help="Otter Assign master notebooks, then `otter assign`: "
        "the student notebook and the autograder zip of every chapter",
    )
    ot.add_argument("path", help="the book folder (or one notebook)")
    ot.add_argument("--out", required=True, help="folder for the Otter files")
    ot.add_argument(
        "--requirements",
        default=None,
        help="requirements.txt for the autograder image (Gradescope)",
    )
    ot.add_argument(
        "--no-assign",
        action="store_true",
        help="write the master notebooks only (do not run otter assign)",
    )
    _json(ot)
    sc = sub.add_parser(
        "sync-colab",
        help="point every chapter's Colab install cell at the "
        "repository named in _config.yml",
    )
    sc.add_argument(
        "--book", default="book", help="the chapters' folder (default book)"
    )
    sc.add_argument(
        "--config", default="_config.yml", help="default _config.yml"
    )
    _json(sc)


def cmd_assignments(args) -> dict:
    from . import editions, grading

    if args.action == "student":
        written = editions.write_student_editions(
            Path(args.path), Path(args.out)
        )
        return {"written": [str(p) for p in written]}
    if args.action == "otter":
        from . import otter

        if not Path(args.path).exists():
            raise ValueError(f"no notebook or folder at {args.path}")
        if args.requirements and not Path(args.requirements).is_file():
            raise ValueError(f"no requirements file at {args.requirements}")
        return {
            "chapters": otter.export(
                Path(args.path),
                Path(args.out),
                args.requirements,
                assign=not args.no_assign,
            )
        }
    if not Path(args.path).is_file():
        raise ValueError(f"no notebook at {args.path}")
    if args.tests and not Path(args.tests).is_file():
        raise ValueError(f"no source chapter at {args.tests}")
    if args.timeout <= 0:
        raise ValueError(f"--timeout must be > 0 seconds, got {args.timeout}")
    return grading.grade(args.path, tests=args.tests, timeout=args.timeout)


def cmd_sync_colab(args) -> dict:
    from . import colab

    changed = colab.sync(Path(args.book), Path(args.config))
    return {
        "repository": colab.repository(Path(args.config))[0],
        "changed": [str(p) for p in changed],
    }


def _json(parser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print one JSON object"
    )


def cmd_bench(args) -> dict:
    from lnpower.devices import resolve_device

    from . import bench

    resolve_device(args.device)
    looped = bench.compare(
        loops=args.loops, device=args.device, repeats=args.repeats
    )
    layer = bench.compare(loops=1, device=args.device, repeats=args.repeats)
    out = {
        **{
            k: looped[k]
            for k in (
                "engine_steps_per_s",
                "naive_steps_per_s",
                "speedup",
                "gflops",
                "peak_gflops",
                "efficiency",
            )
        },
        "looped": looped,
        "layer": layer,
        "rule": bench.select([looped, layer]),
    }
    if args.end_to_end:
        out["end_to_end"] = bench.end_to_end(args.end_to_end)
    return out


COMMANDS = {
    "assignments": cmd_assignments,
    "sync-colab": cmd_sync_colab,
    "bench": cmd_bench,
}


def print_human(name: str, out: dict) -> None:
    """What ``bench``, ``assignments`` and ``sync-colab`` print without
    ``--json``."""
    if name == "bench":
        if "end_to_end" in out:
            e = out["end_to_end"]
            print(
                f"end to end, {e['steps']} steps: lnpower train "
                f"{e['seconds']['lnpower train']:.1f} s, plain loop "
                f"{e['seconds']['plain loop']:.1f} s: {e['speedup']:.2f}x"
            )
        for key in ("looped", "layer"):
            r = out[key]
            print(
                f"{key:>6} (L={r['loops']}, batch {r['batch']}, d={r['d']}, "
                f"n={r['n']}, "
                f"{r['device']}): engine {r['engine_steps_per_s']:.1f} "
                "steps/s, naive "
                f"{r['naive_steps_per_s']:.1f} steps/s, speed-up "
                f"{r['speedup']:.2f}x, "
                f"{r['gflops']:.1f} GFLOP/s = {100 * r['efficiency']:.1f} % "
                "of the "
                f"{r['peak_gflops']:.0f} GFLOP/s matmul peak"
            )
        rule = out["rule"]
        for name, r in rule["ratios"].items():
            print(
                f"{name}: {r['per_run']:.2f} of the engine's steps/s over a "
                f"paper-length run (compilation included), {r['steady']:.2f} "
                "per step after it"
            )
        print(f"the engine rule selects: {rule['selected']}")
        return
    if name == "assignments":
        if "written" in out:
            print("\n".join(out["written"]))
        elif "chapters" in out:
            for c in out["chapters"]:
                print("\n".join(f"{k:>20}: {v}" for k, v in c.items()))
        else:
            from .grading import report

            print(report(out))
        return
    for k, v in out.items():  # sync-colab
        print(f"{k:>32}: {v}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m lnbook", description=__doc__)
    add_parsers(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(argv)
    try:
        out = COMMANDS[args.command](args)
    except (ValueError, MemoryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print_human(args.command, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
