"""Command line: ``python -m lnpower {theory,train,bench,claims,assignments} ... [--json]``.

User errors print one line and exit with status 2; divergence exits with status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

EXIT_USAGE, EXIT_DIVERGED = 2, 3


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") \
            from err


def _task_args(p: argparse.ArgumentParser, paper_defaults: bool = False) -> None:
    """--task, --d, --n, --m; with ``paper_defaults`` unset options stay None (the config fills
    them in), otherwise they take the paper's values here."""
    from .config import PAPER

    pick = (lambda v: None) if paper_defaults else (lambda v: v)
    p.add_argument("--task", choices=("sphere", "rotated"), default=pick(PAPER.task),
                   help="sphere: Task 1; rotated: Task 2 (X = P U with multiplicities m) "
                   f"(default: {PAPER.task})")
    p.add_argument("--d", type=int, default=pick(PAPER.d), help=f"dimension d (default {PAPER.d})")
    p.add_argument("--n", type=int, default=pick(PAPER.n),
                   help=f"number of columns n (default {PAPER.n})")
    p.add_argument("--m", type=_ints, default=None,
                   help="Task 2 multiplicities m1,m2,... (d and n follow from m)")


def _value(x):
    return float(x.value) if hasattr(x, "value") else float(x)


def cmd_theory(args) -> dict:
    from . import theory
    from .tasks import Task

    if args.samples < 2:
        raise ValueError(f"--samples must be >= 2, got {args.samples}")
    if args.loops is not None and args.loops < 1:
        raise ValueError(f"--loops must be a positive integer, got {args.loops}")
    task = Task(args.task, args.d, args.n, args.m)
    c = theory.constants(task, args.samples, args.seed, args.loops)
    out = {k: _value(v) for k, v in c.items()}
    out.update({f"{k}_stderr": v.stderr for k, v in c.items() if hasattr(v, "stderr")})
    out.update({"d": task.d, "n": task.n, "samples": args.samples, "seed": args.seed})
    if task.m is not None:
        out["m"] = list(task.m)
    return out


TRAIN_OPTIONS = ("task", "d", "n", "m", "model", "loops", "layer_norm", "target", "lr", "batch",
                 "steps", "train_size", "test_size", "eval_size", "seed", "v0", "device",
                 "dtype", "optimizer")


def cmd_train(args) -> dict:
    from .cache import check_writable
    from .config import TrainConfig
    from .train import fit

    given = {k: getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}
    cfg = TrainConfig(**given)  # what is not given takes the paper's setting for the model
    if args.save:  # before any work: a run must not be lost to an unwritable path
        check_writable(args.save)
    departures = cfg.departures()
    for line in departures:
        print(f"warning: these settings break {line}", file=sys.stderr)
    h = fit(cfg)
    out = {**h.summary(), "departures_from_the_paper": departures}
    if args.save:
        out["saved"] = str(h.save(args.save))
    return out


def cmd_claims(args) -> dict:
    from . import claims

    results = claims.check_all()
    return {"summary": claims.summary(results), "claims": [r.as_dict() for r in results]}


def cmd_bench(args) -> dict:
    from .book import bench
    from .config import resolve_device

    resolve_device(args.device)
    looped = bench.compare(loops=args.loops, device=args.device, repeats=args.repeats)
    layer = bench.compare(loops=1, device=args.device, repeats=args.repeats)
    out = {**{k: looped[k] for k in ("engine_steps_per_s", "naive_steps_per_s", "speedup",
                                    "gflops", "peak_gflops", "efficiency")},
           "looped": looped, "layer": layer}
    if args.end_to_end:
        out["end_to_end"] = bench.end_to_end(args.end_to_end)
    return out


def cmd_assignments(args) -> dict:
    from pathlib import Path

    from .book import assignments

    if args.action == "student":
        written = assignments.write_student_editions(Path(args.path), Path(args.out))
        return {"written": [str(p) for p in written]}
    if args.action == "otter":
        from .book import otter

        if not Path(args.path).exists():
            raise ValueError(f"no notebook or folder at {args.path}")
        if args.requirements and not Path(args.requirements).is_file():
            raise ValueError(f"no requirements file at {args.requirements}")
        return {"chapters": otter.export(Path(args.path), Path(args.out), args.requirements,
                                         assign=not args.no_assign)}
    if not Path(args.path).is_file():
        raise ValueError(f"no notebook at {args.path}")
    if args.tests and not Path(args.tests).is_file():
        raise ValueError(f"no source chapter at {args.tests}")
    if args.timeout <= 0:
        raise ValueError(f"--timeout must be > 0 seconds, got {args.timeout}")
    return assignments.grade(args.path, tests=args.tests, timeout=args.timeout)


def cmd_sync_colab(args) -> dict:
    from pathlib import Path

    from .book import colab

    changed = colab.sync(Path(args.book), Path(args.config))
    return {"repository": colab.repository(Path(args.config))[0],
            "changed": [str(p) for p in changed]}


def _print_human(name: str, out: dict) -> None:
    if name == "assignments":
        if "written" in out:
            print("\n".join(out["written"]))
        elif "chapters" in out:
            for c in out["chapters"]:
                print("\n".join(f"{k:>20}: {v}" for k, v in c.items()))
        else:
            from .book.assignments import report
            print(report(out))
        return
    if name == "bench":
        if "end_to_end" in out:
            e = out["end_to_end"]
            print(f"end to end, {e['steps']} steps: lnpower train "
                  f"{e['seconds']['lnpower train']:.1f} s, plain loop "
                  f"{e['seconds']['plain loop']:.1f} s: {e['speedup']:.2f}x")
        for key in ("looped", "layer"):
            r = out[key]
            print(f"{key:>6} (L={r['loops']}, batch {r['batch']}, d={r['d']}, n={r['n']}, "
                  f"{r['device']}): engine {r['engine_steps_per_s']:.1f} steps/s, naive "
                  f"{r['naive_steps_per_s']:.1f} steps/s, speed-up {r['speedup']:.2f}x, "
                  f"{r['gflops']:.1f} GFLOP/s = {100 * r['efficiency']:.1f} % of the "
                  f"{r['peak_gflops']:.0f} GFLOP/s matmul peak")
        return
    if name == "claims":
        for c in out["claims"]:
            print(f"[{c['status']:>14}] {c['id']}: measured {c['measured']} "
                  f"(paper: {c['paper']}; {c['tolerance']}) - {c['detail']}")
        print(out["summary"])
        return
    for k, v in out.items():
        print(f"{k:>32}: {v:.6g}" if isinstance(v, float) else f"{k:>32}: {v}")


def _train_args(r: argparse.ArgumentParser) -> None:
    """The options of ``train``: each left unset takes the paper's setting (§5) for the model,
    read from ``lnpower.config`` (shown in the help)."""
    from .config import MODEL_DEFAULTS, PAPER

    loops = ", ".join(f"{k}: {v['loops']}" for k, v in MODEL_DEFAULTS.items())
    target = ", ".join(f"{k}: {v['target']}" for k, v in MODEL_DEFAULTS.items())
    r.add_argument("--model", choices=tuple(MODEL_DEFAULTS), default=None,
                   help=f"one layer or the looped model (3.1) (default: {PAPER.model})")
    r.add_argument("--loops", type=int, default=None, help=f"L (paper default: {loops})")
    ln = r.add_mutually_exclusive_group()
    ln.add_argument("--layer-norm", dest="layer_norm", action="store_true", default=None,
                    help="with the paper's LN (the default)")
    ln.add_argument("--no-layer-norm", dest="layer_norm", action="store_false",
                    help="without LN, the layer (4.3)")
    r.add_argument("--target", choices=("subspace", "normalized", "unnormalized"), default=None,
                   help=f"the loss (paper default: {target})")
    for flag, key, text in (("--steps", "steps", "SGD iterations T"),
                            ("--lr", "lr", "step size eta"), ("--batch", "batch", "batch size"),
                            ("--train-size", "train_size", "training samples"),
                            ("--test-size", "test_size", "test samples"),
                            ("--eval-size", "eval_size", "training samples the recorded "
                             "training loss is measured on (a fixed random subset)"),
                            ("--seed", "seed", "the run's one seed"),
                            ("--v0", "v0", "V21 = v0 I at t = 0 (the book's choice)")):
        kind = type(getattr(PAPER, key))
        r.add_argument(flag, type=kind, default=None,
                       help=f"{text} (default: {getattr(PAPER, key)})")
    r.add_argument("--optimizer", choices=("sgd", "adam"), default=None,
                   help="sgd (the paper's, the default) or adam (torch.optim.Adam's update)")
    r.add_argument("--device", default=None, help=f"cpu or cuda (default: {PAPER.device})")
    r.add_argument("--dtype", choices=("float32", "float64"), default=None,
                   help=f"(default: {PAPER.dtype})")
    r.add_argument("--save", default=None, help="folder to save the History in (checked "
                   "before training starts)")
    r.add_argument("--json", action="store_true", help="print one JSON object")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lnpower", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("theory", help="the paper's constants by Monte Carlo (float64)")
    _task_args(t)
    t.add_argument("--loops", type=int, default=None, help="also the L-step power method loss")
    t.add_argument("--samples", type=int, default=100_000, help="Monte Carlo samples")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--json", action="store_true", help="print one JSON object")
    r = sub.add_parser("train", help="train a layer or a looped model by SGD (or Adam); every "
                       "option left unset takes the paper's setting for the model")
    _task_args(r, paper_defaults=True)
    _train_args(r)
    b = sub.add_parser("bench", help="training speed: the engine against naive autograd")
    b.add_argument("--loops", type=int, default=10, help="L of the looped model (default 10)")
    b.add_argument("--repeats", type=int, default=7, help="timed blocks per implementation")
    b.add_argument("--device", default="cpu", help="cpu or cuda")
    b.add_argument("--end-to-end", type=int, default=0, metavar="STEPS",
                   help="also time `train` end to end against a plain autograd loop for "
                   "STEPS steps (fresh processes, start-up included)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    a = sub.add_parser("assignments", help="coursework: student editions, grading, Otter")
    asub = a.add_subparsers(dest="action", required=True)
    st = asub.add_parser("student", help="write the student edition of every chapter")
    st.add_argument("path", help="the book folder (or one notebook)")
    st.add_argument("--out", required=True, help="folder for the student editions")
    st.add_argument("--json", action="store_true", help="print one JSON object")
    gr = asub.add_parser("grade", help="execute a submitted notebook and grade its exercises")
    gr.add_argument("path", help="the submitted notebook")
    gr.add_argument("--tests", default=None, metavar="CHAPTER",
                    help="the source chapter (instructor edition) whose tests grade the "
                    "submission (default: the notebook itself, for an instructor edition)")
    gr.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    gr.add_argument("--json", action="store_true", help="print one JSON object")
    ot = asub.add_parser("otter", help="Otter Assign master notebooks, then `otter assign`: "
                         "the student notebook and the autograder zip of every chapter")
    ot.add_argument("path", help="the book folder (or one notebook)")
    ot.add_argument("--out", required=True, help="folder for the Otter files")
    ot.add_argument("--requirements", default=None,
                    help="requirements.txt for the autograder image (Gradescope)")
    ot.add_argument("--no-assign", action="store_true",
                    help="write the master notebooks only (do not run otter assign)")
    ot.add_argument("--json", action="store_true", help="print one JSON object")
    sc = sub.add_parser("sync-colab", help="point every chapter's Colab install cell at the "
                        "repository named in _config.yml")
    sc.add_argument("--book", default="book", help="the chapters' folder (default book)")
    sc.add_argument("--config", default="_config.yml", help="default _config.yml")
    sc.add_argument("--json", action="store_true", help="print one JSON object")
    c = sub.add_parser("claims", help="check every registered claim now")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def main(argv=None) -> int:
    from .train import TrainingDiverged

    args = parser().parse_args(argv)
    t0 = time.perf_counter()
    try:
        commands = {"theory": cmd_theory, "train": cmd_train, "claims": cmd_claims,
                    "bench": cmd_bench, "assignments": cmd_assignments,
                    "sync-colab": cmd_sync_colab}
        out = commands[args.command](args)
    except TrainingDiverged as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_DIVERGED
    except (ValueError, MemoryError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "theory":
        out["seconds"] = time.perf_counter() - t0
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print_human(args.command, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
