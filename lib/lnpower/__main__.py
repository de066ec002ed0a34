"""Command line: ``python -m lnpower
{theory,train,sweep,bench,claims,assignments,sync-colab} ... [--json]``. The
commands; their options are in :mod:`lnpower.cli`.

User errors print one line and exit with status 2; divergence exits with
status 3.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .book import commands as book_commands
from .cli import parser

EXIT_USAGE, EXIT_DIVERGED = 2, 3


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

    results = claims.check_all()
    return {
        "summary": claims.summary(results),
        "claims": [r.as_dict() for r in results],
    }


def cmd_sweep(args) -> dict:
    from . import sweep
    from .cache import check_writable

    configs = sweep.from_options(
        args.name, args.grid, args.set, args.seeds, args.device
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
    from . import stored

    names = args.name or [*stored.NAMES, "where"]
    for n in names:
        if n != "where":
            stored.configs(n)  # an unknown name fails here, before training
    written = stored.regenerate([n for n in names if n != "where"])
    if "where" in names:
        from . import where

        written.append(where.store())
    return {"written": [str(p) for p in written]}


def _print_human(name: str, out: dict) -> None:
    if name in book_commands.COMMANDS:
        book_commands.print_human(name, out)
        return
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
            **book_commands.COMMANDS,
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


if __name__ == "__main__":
    sys.exit(main())
