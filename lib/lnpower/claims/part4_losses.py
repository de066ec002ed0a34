"""Claims of §5 and Appendix G.1 about the losses: LN below both no-LN
layers (Fig. 2), and no train-test gap for the LN layer at d in {8, 16}, n
in {16, 32, 64} at both readings of T (Fig. 3)."""

from __future__ import annotations

import numpy as np

from .. import stored
from ..readings import gap
from ..runs import TASKS, ensemble, fig3_runs
from .core import STATUSES, ordering, over_seeds

FIG3_SEEDS = 3


def _fig2():
    ln, worst, rows = ensemble("layer"), "reproduced", []
    plain = [
        ensemble("layer", norm="none", target=t)
        for t in ("normalized", "unnormalized")
    ]
    for t in TASKS:
        best = np.minimum(
            *([h.train_loss[-1] for h in runs[t]] for runs in plain)
        )
        status, line = ordering(
            {
                "better no-LN": list(best),
                "LN": [h.train_loss[-1] for h in ln[t]],
            }
        )
        worst = max(worst, status, key=STATUSES.index)
        rows.append(f"{TASKS[t]}: {status}: {line}")
    return worst, worst, "; ".join(rows)


def _fig3():
    worst, where = [], []
    for s in range(FIG3_SEEDS):
        gaps = {k: gap(h) for k, h in fig3_runs(s).items()}
        (t, d, n), w = max(gaps.items(), key=lambda kv: kv[1])
        worst.append(w)
        where.append(f"{TASKS[t]}, d={d}, n={n}")
    return over_seeds(
        worst,
        np.array(worst) < 0.1,
        "11 configurations; the largest gap of each seed at: "
        f"{'; '.join(where)}",
    )


def _fig3_epochs():
    gaps = {k: gap(h) for k, h in stored.fig3().items()}
    (t, d, n), worst = max(gaps.items(), key=lambda kv: kv[1])
    return over_seeds(
        [worst],
        [worst < 0.1],
        f"{len(gaps)} configurations; the largest gap "
        f"{100 * worst:.1f} % at {TASKS[t]}, d={d}, n={n}",
    )
