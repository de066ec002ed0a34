"""The command line's parser: ``python -m lnpower
{theory,train,sweep,bench,claims,assignments,sync-colab} ... [--json]``.
Options of ``train`` left unset take the paper's settings for the model
(:mod:`lnpower.config`); ``--help`` shows them.

User errors print one line and exit with status 2; divergence exits with
status 3.
"""

from __future__ import annotations

import argparse

from .book import commands as book_commands


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

    pick = (lambda v: None) if paper_defaults else (lambda v: v)
    p.add_argument(
        "--task",
        choices=("sphere", "rotated"),
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
    from .config import MODEL_DEFAULTS, PAPER
    from .norms import NORMS

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
        choices=("subspace", "normalized", "unnormalized"),
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
        choices=("sgd", "adam"),
        default=None,
        help="sgd (the paper's, the default) or adam (torch.optim.Adam's "
        "update)",
    )
    r.add_argument(
        "--sampling",
        choices=("replacement", "epochs"),
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
        choices=("float32", "float64"),
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
    book_commands.add_parsers(sub)
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
    s = sub.add_parser(
        "stored-runs",
        help="train the stored runs at the epoch reading of T "
        "again and write them beside the library (about 40 min on 2 cores)",
    )
    s.add_argument(
        "--name",
        action="append",
        default=None,
        help="one stored set (repeatable; default all: layer, "
        "no-ln-normalized, no-ln-unnormalized, Fig. 3's fig3-dD-nN and "
        "where, the full grid of the chapter where, about 7 min)",
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")
    return p
