"""The command line: ``python -m lnpower
{theory,train,claims,sweep,stored-runs} ... [--json]`` (or ``lnpower ...``
once installed): its options, its commands and how they print. Options of
``train`` left unset take the paper's settings for the model
(:mod:`lnpower.config`); ``--help`` shows them.

User errors print one line and exit with status 2; divergence exits with
status 3.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

EXIT_USAGE, EXIT_DIVERGED = 2, 3


def _where(full: bool):
    def configs():
        from .chapters import where

        return where.configs(full=full)

    return configs


# the sweeps the command line knows by name: the chapter where's grid
NAMED_SWEEPS = {"where": _where(True), "where-subset": _where(False)}


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from err


def _task_args(
    p: argparse.ArgumentParser, paper_defaults: bool = False
) -> None:
    """--task, --d, --n, --m; with ``paper_defaults`` unset options stay
    None (the config fills them in), otherwise they take the paper's values
    here."""
    from .config import PAPER
    from .tasks import TASKS

    pick = (lambda v: None) if paper_defaults else (lambda v: v)
    p.add_argument(
        "--task",
        choices=TASKS,
        default=pick(PAPER.task),
        help="sphere: Task 1; rotated: Task 2 (X = P U with multiplicities m) "
        f"(default: {PAPER.task})",
    )
    p.add_argument(
        "--d",
        type=int,
        default=pick(PAPER.d),
        help=f"dimension d (default {PAPER.d})",
    )
    p.add_argument(
        "--n",
        type=int,
        default=pick(PAPER.n),
        help=f"number of columns n (default {PAPER.n})",
    )
    p.add_argument(
        "--m",
        type=_ints,
        default=None,
        help="Task 2 multiplicities m1,m2,... (d and n follow from m)",
    )


def _train_args(r: argparse.ArgumentParser) -> None:
    """The options of ``train``: each left unset takes the paper's setting
    (§5) for the model, read from ``lnpower.config`` (shown in the help)."""
    from .config import (
        DTYPES,
        MODEL_DEFAULTS,
        OPTIMIZERS,
        PAPER,
        SAMPLINGS,
    )
    from .norms import NORMS
    from .tasks import TARGETS

    loops = ", ".join(f"{k}: {v['loops']}" for k, v in MODEL_DEFAULTS.items())
    target = ", ".join(
        f"{k}: {v['target']}" for k, v in MODEL_DEFAULTS.items()
    )
    r.add_argument(
        "--model",
        choices=tuple(MODEL_DEFAULTS),
        default=None,
        help=f"one layer or the looped model (3.1) (default: {PAPER.model})",
    )
    r.add_argument(
        "--loops", type=int, default=None, help=f"L (paper default: {loops})"
    )
    r.add_argument(
        "--norm",
        choices=("none", *NORMS),
        default=None,
        help="the paper's LN (layernorm, the default), none (the layer "
        "(4.3)) or another normalisation (lnpower.norms)",
    )
    r.add_argument(
        "--target",
        choices=TARGETS,
        default=None,
        help=f"the loss (paper default: {target})",
    )
    for flag, key, text in (
        ("--steps", "steps", "SGD iterations T"),
        ("--lr", "lr", "step size eta"),
        ("--batch", "batch", "batch size"),
        ("--train-size", "train_size", "training samples"),
        ("--test-size", "test_size", "test samples"),
        (
            "--eval-size",
            "eval_size",
            "training samples the recorded "
            "training loss is measured on (a fixed random subset)",
        ),
        ("--seed", "seed", "the run's one seed"),
        ("--v0", "v0", "V21 = v0 I at t = 0 (the book's choice)"),
    ):
        kind = type(getattr(PAPER, key))
        r.add_argument(
            flag,
            type=kind,
            default=None,
            help=f"{text} (default: {getattr(PAPER, key)})",
        )
    r.add_argument(
        "--optimizer",
        choices=OPTIMIZERS,
        default=None,
        help="sgd (the paper's, the default) or adam (torch.optim.Adam's "
        "update)",
    )
    r.add_argument(
        "--sampling",
        choices=SAMPLINGS,
        default=None,
        help="minibatches drawn with replacement at every step (the default) "
        "or "
        "in passes without replacement (epochs)",
    )
    r.add_argument(
        "--epochs",
        type=int,
        default=None,
        help="T as passes over the training "
        "set (sets --sampling epochs and --steps to epochs x (train size // "
        "batch))",
    )
    r.add_argument(
        "--device", default=None, help=f"cpu or cuda (default: {PAPER.device})"
    )
    r.add_argument(
        "--dtype",
        choices=tuple(DTYPES),
        default=None,
        help=f"(default: {PAPER.dtype})",
    )
    r.add_argument(
        "--save",
        default=None,
        help="folder to save the History in (checked before training starts)",
    )
    r.add_argument("--json", action="store_true", help="print one JSON object")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lnpower", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser(
        "theory", help="the paper's constants by Monte Carlo (float64)"
    )
    _task_args(t)
    t.add_argument(
        "--loops",
        type=int,
        default=None,
        help="also the L-step power method loss",
    )
    t.add_argument(
        "--samples", type=int, default=100_000, help="Monte Carlo samples"
    )
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--json", action="store_true", help="print one JSON object")
    r = sub.add_parser(
        "train",
        help="train a layer or a looped model by SGD (or Adam); every "
        "option left unset takes the paper's setting for the model",
    )
    _task_args(r, paper_defaults=True)
    _train_args(r)
    w = sub.add_parser(
        "sweep",
        help="a grid of runs on dask.distributed (a local cluster, or "
        "--scheduler); resumable through the training cache",
    )
    w.add_argument(
        "name",
        nargs="?",
        default=None,
        help="a named sweep: 'where' (the chapter where's grid) or "
        "'where-subset' (the part its chapter trains); else give --grid",
    )
    w.add_argument(
        "--grid",
        action="append",
        default=[],
        metavar="FIELD=V1,V2",
        help="an axis over a TrainConfig field (repeatable)",
    )
    w.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=V",
        help="a fixed TrainConfig setting (repeatable)",
    )
    w.add_argument(
        "--seeds", type=_ints, default=(0,), help="seeds (default 0)"
    )
    w.add_argument(
        "--out", required=True, help="the table, .csv or .json, one row a run"
    )
    w.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="an existing dask scheduler (default: a local cluster)",
    )
    w.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes of the local cluster (default: one per core)",
    )
    w.add_argument(
        "--group",
        type=int,
        default=8,
        help="runs trained together in one task (default 8)",
    )
    w.add_argument("--device", default=None, help="cpu or cuda (default cpu)")
    w.add_argument("--json", action="store_true", help="print one JSON object")
    c = sub.add_parser("claims", help="check every registered claim now")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    from .chapters.stored_runs import SETS

    s = sub.add_parser(
        "stored-runs",
        help="train the runs stored with the library again (or take them "
        "from the training cache), under the seed base of LNPOWER_SEED, and "
        "write them beside the library (from a clone of the repository: the "
        "runs ship with the package)",
    )
    s.add_argument(
        "--seed",
        type=int,
        nargs="+",
        default=[0],
        help="the seeds of the runs (default 0; the book stores the looped "
        "model's ensemble at T = 2000, seeds 0 to 2, under LNPOWER_SEED 0, 1 "
        "and 2: lnpower.chapters.stored_runs says how)",
    )
    s.add_argument(
        "--name",
        action="append",
        default=None,
        choices=[*SETS, "where"],
        metavar="NAME",
        help="one stored set (repeatable; default all): "
        + ", ".join(SETS)
        + "; and where, the full grid of the chapter where (about 7 min)",
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _value(x):
    return float(x.value) if hasattr(x, "value") else float(x)


def cmd_theory(args) -> dict:
    from . import theory
    from .tasks import Task

    if args.samples < 2:
        raise ValueError(f"--samples must be >= 2, got {args.samples}")
    if args.loops is not None and args.loops < 1:
        raise ValueError(
            f"--loops must be a positive integer, got {args.loops}"
        )
    task = Task(args.task, args.d, args.n, args.m)
    c = theory.constants(task, args.samples, args.seed, args.loops)
    out = {k: _value(v) for k, v in c.items()}
    out.update(
        {f"{k}_stderr": v.stderr for k, v in c.items() if hasattr(v, "stderr")}
    )
    out.update(
        {"d": task.d, "n": task.n, "samples": args.samples, "seed": args.seed}
    )
    if task.m is not None:
        out["m"] = list(task.m)
    return out


def _train_options() -> tuple[str, ...]:
    """The fields of ``TrainConfig`` that ``train`` has an option for."""
    from dataclasses import fields

    from .config import TrainConfig

    hidden = ("init_scale", "log_points", "snapshot_steps")
    return tuple(f.name for f in fields(TrainConfig) if f.name not in hidden)


def cmd_train(args) -> dict:
    from .cache import check_writable
    from .config import TrainConfig
    from .train import fit

    given = {
        k: getattr(args, k)
        for k in _train_options()
        if getattr(args, k) is not None
    }
    if args.epochs is not None:
        if args.epochs <= 0 or "steps" in given:
            raise ValueError(
                "--epochs must be a positive integer and excludes --steps"
            )
        given["sampling"] = "epochs"
        given["steps"] = TrainConfig(**given).epoch_steps(args.epochs)
    cfg = TrainConfig(
        **given
    )  # what is not given takes the paper's setting for the model
    if (
        args.save
    ):  # before any work: a run must not be lost to an unwritable path
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
    from .claims import report

    results = report.check_all()
    return {
        "summary": claims.summary(results),
        "claims": [r.as_dict() for r in results],
    }


def cmd_sweep(args) -> dict:
    from . import sweep
    from .cache import check_writable

    if args.name is not None:
        if args.name not in NAMED_SWEEPS:
            raise ValueError(
                f"unknown sweep {args.name!r}: name one of "
                f"{tuple(NAMED_SWEEPS)}, or give --grid without a name"
            )
        if args.grid or args.set:
            raise ValueError("a named sweep takes no --grid or --set")
        configs = NAMED_SWEEPS[args.name]()
    else:
        configs = sweep.from_options(
            args.grid, args.set, args.seeds, args.device
        )
    if args.group <= 0 or (args.workers is not None and args.workers <= 0):
        raise ValueError("--group and --workers must be positive integers")
    check_writable(Path(args.out).resolve().parent)
    t0 = time.perf_counter()
    results = sweep.run(configs, args.scheduler, args.workers, args.group)
    rows = [sweep.row(c, h) for c, h in zip(configs, results)]
    failed = [r for r in rows if r["status"] != "ok"]
    return {
        "runs": len(rows),
        "failed": len(failed),
        "seconds": time.perf_counter() - t0,
        "table": str(sweep.write_table(rows, args.out)),
        "failures": [
            f"{r['error']} ({ {k: r[k] for k in sweep.COLUMNS} })"
            for r in failed
        ],
    }


def cmd_stored_runs(args) -> dict:
    from .chapters import stored_runs

    names = args.name or [*stored_runs.SETS, "where"]
    if min(args.seed) < 0:
        raise ValueError(f"--seed must be >= 0, got {min(args.seed)}")
    sets = [n for n in names if n != "where"]
    written = [
        p for seed in args.seed for p in stored_runs.regenerate(sets, seed)
    ]
    if "where" in names:
        from .chapters import where

        written.append(where.store())
    out = {"written": [str(p) for p in written]}
    if any("site-packages" in p for p in out["written"]):
        out["note"] = (
            "written into the installed package; to change the stored runs "
            "of a checkout, run from its root with PYTHONPATH=lib"
        )
    return out


def _print_human(name: str, out: dict) -> None:
    if name == "claims":
        for c in out["claims"]:
            print(
                f"[{c['status']:>14}] {c['id']}: measured {c['measured']} "
                f"(paper: {c['paper']}; {c['tolerance']}) - {c['detail']}"
            )
        print(out["summary"])
        return
    if name == "sweep":
        print(
            f"{out['runs']} runs, {out['failed']} failed, "
            f"{out['seconds']:.0f} s; table: {out['table']}"
        )
        for line in out["failures"]:
            print(f"failed: {line}")
        return
    for k, v in out.items():
        print(f"{k:>32}: {v:.6g}" if isinstance(v, float) else f"{k:>32}: {v}")


def main(argv=None) -> int:
    from .train import TrainingDiverged

    args = parser().parse_args(argv)
    t0 = time.perf_counter()
    try:
        commands = {
            "theory": cmd_theory,
            "train": cmd_train,
            "claims": cmd_claims,
            "stored-runs": cmd_stored_runs,
            "sweep": cmd_sweep,
        }
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
