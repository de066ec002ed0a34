"""Claims of §5 and Appendix G as the paper words them (every sentence about
a figure), each measured over a seed ensemble and, where it depends on the
horizon, at both readings of T (``lnpower.runs.READINGS``); and the book's
rate-aware versions that tell a slow approach from a wrong limit."""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import dynamics, inference, stored, tasks
from ..config import PAPER, paper_config
from ..runs import (
    FIG3,
    READINGS,
    TASKS,
    ensemble,
    ln_run,
    looped_run,
    paper_task,
    tasks_at,
)
from ..train import fit_many
from .core import STATUSES, claim, ordering, over_seeds, trend_status, verdict

CH, CH_42, CH_43 = "book/experiments", "book/without_ln", "book/with_ln"
CH_GRID = "book/experiments_grid"  # Fig. 3, across d and n
CH_G = "book/experiments_looped"  # Figs. 1 and G.3, the looped model
FIG3_SEEDS = 3
# test matrices per task and seed, where the paper loops on one (Figs. 5, G.3)
POINTS = 100
# "exponential in L": R^2 within this of the power method's on the same points
R2_MARGIN = 0.02


def window(T: int) -> tuple[float, float]:
    """The last decade of a run of T steps, where its growth exponent is
    read."""
    return T / 10, T


WINDOW = window(PAPER.steps)  # [200, 2000]


def slope(t, y, win=WINDOW) -> float:
    """Least-squares log-log slope of y against t over ``win``."""
    return dynamics.exponent(t, y, *win)[0]


def sgd_slopes(h) -> tuple[float, float]:
    """Exponents of the two active weights over the last decade of an SGD
    run, fitted at its logged (log-spaced) steps."""
    t = np.array(h.steps)
    return tuple(
        slope(t, np.asarray(x)[t], window(h.config.steps)) for x in (h.w, h.v)
    )


def population_slopes(run, T: int) -> tuple[float, float]:
    """The same exponents on a run of the reduced population dynamics ``(t,
    w, v)``."""
    t, w, v = run
    return slope(t, w, window(T)), slope(t, v, window(T))


def growth_spread(model: str, power: float):
    """Per seed, the worst relative distance of the four slopes (two
    weights, two tasks) from ``power``, and the median slopes per task."""
    runs = ensemble(model)
    s = {t: np.array([sgd_slopes(h) for h in hs]) for t, hs in runs.items()}
    worst = np.max(
        [np.abs(x / power - 1).max(axis=1) for x in s.values()], axis=0
    )
    med = {t: np.median(x, axis=0) for t, x in s.items()}
    return worst, med


def _names(model: str) -> tuple[str, str]:
    return ("w", "v") if model == "looped" else ("alpha", "beta")


def _growth_claim(model: str, power: float):
    worst, med = growth_spread(model, power)
    a, b = _names(model)
    return over_seeds(
        worst,
        worst <= 0.2,
        "median slopes "
        + "; ".join(
            f"{TASKS[t]}: {a} {x:.3f}, {b} {y:.3f}"
            for t, (x, y) in med.items()
        ),
    )


def _population_growth(model: str, power: float):
    """Slopes of the population recursion at both readings, and the worst
    distance at the epoch reading."""
    run = looped_run if model == "looped" else ln_run
    a, b = _names(model)
    rows, worst = [], 0.0
    for t in TASKS:
        for reading, T in READINGS.items():
            x, y = population_slopes(run(t)[1], T)
            rows.append(
                f"{TASKS[t]}, {reading} [{T // 10}, {T}]: {a} {x:.3f}, {b} "
                f"{y:.3f}"
            )
            if reading == "epochs":
                worst = max(worst, abs(x / power - 1), abs(y / power - 1))
    return worst, rows


@claim(
    id="fig1-growth-quarter",
    ref="thm-4-1",
    where="Theorem 4.1; §5, Fig. 1",
    statement=(
        "The looped model's active weights grow polynomially, 'consistent "
        "with the Theta(t^(1/4)) scaling' on log-log axes (SGD, T = 2000 "
        "iterations, both tasks)"
    ),
    paper="slope 1/4 for w_t and v_t",
    tolerance=(
        "per seed: each weight's least-squares slope over [200, 2000] within "
        "20 % of 1/4"
    ),
    chapter=CH_G,
)
def _fig1():
    return _growth_claim("looped", 0.25)


@claim(
    id="fig1-growth-quarter-epochs",
    ref="thm-4-1",
    where="Theorem 4.1; §5, Fig. 1",
    statement=(
        "The same sentence with T read as 2000 epochs (156 000 iterations): "
        "the population recursion of the looped model, both tasks"
    ),
    paper="slope 1/4 for w_t and v_t",
    tolerance=(
        "each weight's slope over the last decade [15 600, 156 000] within 20 "
        "% of 1/4 (population recursion; SGD at this reading takes about 70 "
        "min on 2 cores and is not run)"
    ),
    chapter=CH_G,
)
def _fig1_epochs():
    worst, rows = _population_growth("looped", 0.25)
    return round(worst, 3), verdict(worst <= 0.2), "; ".join(rows)


@claim(
    id="fig2-ln-below",
    ref="thm-4-3",
    where="Theorems 4.2 and 4.3; §5, Fig. 2",
    statement=(
        "With LN the layer's training loss at T = 2000 is below both no-LN "
        "layers' (normalised and unnormalised target), which stall "
        "(both tasks)"
    ),
    paper="the LN curve below the two no-LN curves",
    tolerance=(
        "per task, the better no-LN loss above the LN loss for every seed, "
        "the medians apart by more than the 10-90 % spreads "
        "(lnpower.claims.ordering)"
    ),
    chapter=CH,
)
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


@claim(
    id="fig4-growth-sixth",
    ref="thm-4-3",
    where="Theorem 4.3; Appendix G.1, Fig. 4",
    statement=(
        "The LN layer's active weights 'asymptotically exhibit a slope that "
        "aligns with Theta(t^(1/6))' (SGD, T = 2000 iterations, both tasks)"
    ),
    paper="slope 1/6 for alpha_t and beta_t",
    tolerance=(
        "per seed: each weight's least-squares slope over [200, 2000] within "
        "20 % of 1/6"
    ),
    chapter=CH,
)
def _fig4():
    return _growth_claim("layer", 1 / 6)


@claim(
    id="fig4-growth-sixth-epochs",
    ref="thm-4-3",
    where="Theorem 4.3; Appendix G.1, Fig. 4",
    statement=(
        "The same sentence with T read as 2000 epochs (156 000 iterations, "
        "minibatches in passes without replacement): the stored SGD runs, and "
        "the population recursion"
    ),
    paper="slope 1/6",
    tolerance=(
        "per stored SGD run: each weight's slope over [15 600, 156 000] "
        "within 20 % of 1/6, both tasks"
    ),
    chapter=CH,
)
def _fig4_epochs():
    runs = stored.load("layer")
    worst = [
        max(abs(x * 6 - 1) for t in TASKS for x in sgd_slopes(runs[t][s]))
        for s in range(len(runs["sphere"]))
    ]
    _, rows = _population_growth("layer", 1 / 6)
    med = {t: sgd_slopes(runs[t][0]) for t in TASKS}
    return over_seeds(
        worst,
        np.array(worst) <= 0.2,
        "SGD seed 0: "
        + "; ".join(
            f"{TASKS[t]}: alpha {x:.3f}, beta {y:.3f}"
            for t, (x, y) in med.items()
        )
        + "; population: "
        + "; ".join(rows),
    )


@claim(
    id="ln-balance-rate",
    ref="thm-4-3",
    where="Theorem 4.3 (rate-aware)",
    statement=(
        "alpha_t/beta_t approaches 1 at the predicted rate: D_t = beta_t^2 - "
        "alpha_t^2 stays nearly constant, so (1 - alpha_t/beta_t) 2 "
        "gamma_t/D_t -> 1 (reduced dynamics, Task 1)"
    ),
    paper="a corollary of the D recursion",
    tolerance="within 2 % of 1 at t = 10^6, approaching at every decade",
    chapter=CH_43,
    source="book",
)
def _balance():
    _, (t, a, b) = ln_run()
    vals = [
        float(np.interp(x, t, (1 - a / b) * 2 * a * b / (b * b - a * a)))
        for x in (10**3, 10**4, 10**5, 10**6)
    ]
    return (
        round(vals[-1], 4),
        trend_status(vals, 1.0, 0.02),
        "at t = 10^3..10^6: " + ", ".join(f"{v:.4f}" for v in vals),
    )


@claim(
    id="ln-exponent-excess",
    ref="thm-4-3",
    where="Theorem 4.3 (rate-aware)",
    statement=(
        "The local growth exponent of gamma_t exceeds 1/3 by an amount that "
        "shrinks like 1/gamma_t: (p(t) - 1/3) gamma_t is nearly constant over "
        "t = 10^4..10^6 (reduced dynamics, Task 1)"
    ),
    paper="gamma_t = Theta(t^(1/3))",
    tolerance="the three values within 15 % of their mean",
    chapter=CH_43,
    source="book",
)
def _excess():
    _, (t, a, b) = ln_run()
    g = a * b
    vals = [
        (dynamics.exponent(t, g, x / 3, 3 * x)[0] - 1 / 3)
        * float(np.interp(x, t, g))
        for x in (10**4, 10**5, 3 * 10**5)
    ]
    spread = max(abs(v / np.mean(vals) - 1) for v in vals)
    return (
        round(spread, 4),
        verdict(spread < 0.15 and min(vals) > 0),
        "(p - 1/3) gamma near t = 10^4, 10^5, 3x10^5: "
        + ", ".join(f"{v:.4f}" for v in vals),
    )


def fig3_runs(seed: int = 0) -> dict:
    """The LN layer at each configuration of Fig. 3 (Task 2 needs n > d),
    cached; the tasks of one (d, n) are trained together, so (16, 32) are
    the runs of Figs. 2 and 4."""
    runs = {}
    for d, n in FIG3:
        names = tasks_at(d, n)
        pair = fit_many(
            [paper_config(task=t, d=d, n=n, seed=seed) for t in names],
            cache=True,
        )
        runs.update({(t, d, n): h for t, h in zip(names, pair)})
    return {
        (t, d, n): runs[t, d, n]
        for t in TASKS
        for d, n in FIG3
        if (t, d, n) in runs
    }


@claim(
    id="fig3-no-gap",
    ref="thm-4-3",
    where="Theorem 4.3; Appendix G.1, Fig. 3",
    statement=(
        "For d in {8, 16} and n in {16, 32, 64} there is 'no discernible gap "
        "between the training loss and the test loss' of the LN layer (both "
        "tasks, T = 2000)"
    ),
    paper="train = test",
    tolerance=(
        "per seed: relative gap below 10 % for "
        f"every configuration ({FIG3_SEEDS} seeds)"
    ),
    chapter=CH_GRID,
)
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


def gap(h) -> float:
    """Fig. 3's quantity: |test loss / training loss - 1| at the end of a
    run."""
    return abs(h.test_loss[-1] / h.train_loss[-1] - 1)


@claim(
    id="fig3-no-gap-epochs",
    ref="thm-4-3",
    where="Theorem 4.3; Appendix G.1, Fig. 3",
    statement=(
        "Fig. 3's sentence with T read as 2000 epochs (156 000 iterations, "
        "passes without replacement): the stored SGD runs of the LN layer at "
        "its eleven configurations"
    ),
    paper="train = test",
    tolerance="relative gap below 10 % for every configuration (one seed)",
    chapter=CH_GRID,
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


@cache
def points(task: str, count: int = POINTS, seed: int = PAPER.seed + 8):
    """The test matrices of Figs. 5 and G.3: ``count`` draws of the task
    (seeded)."""
    return paper_task(task).sample(count, tasks.generator(seed))


def median_error(W, V, task: str, L_max: int = 25) -> np.ndarray:
    """Median sin(phi_L) over :func:`points`, L = 1..L_max, of (W, V)
    looped."""
    X, a = points(task)
    return np.median(inference.loop_errors(W, V, X, a, L_max), axis=1)


@cache
def power_method_median(task: str, L_max: int = 25) -> np.ndarray:
    """Median sin(phi_L) of the power method on the same points."""
    X, a = points(task)
    P = tasks.principal_projector(X)[0]
    return np.median(
        inference.sin_angle(inference.power_method(X, a, L_max), P).numpy(),
        axis=1,
    )


def semilog_fit(err) -> tuple[float, float]:
    """Per-loop rate and R^2 of a straight line through log(err) against L."""
    L, y = np.arange(1, len(err) + 1), np.log(err)
    coef = np.polyfit(L, y, 1)
    resid = y - np.polyval(coef, L)
    return float(np.exp(coef[0])), float(1 - resid.var() / y.var())


@cache
def fig5_curves(reading: str = "iterations") -> dict:
    """Per task, per seed, the median error curves of Fig. 5's snapshots and
    the power method's, ``{task: [{T: curve, ..., "power method": curve},
    ...]}``: of the LN layer's seed ensemble (``"iterations"``) or of its
    stored run at the epoch reading (``"epochs"``). Computed once per
    process: three claims read them."""
    histories = (
        ensemble("layer") if reading == "iterations" else stored.load("layer")
    )
    out = {}
    for t, hs in histories.items():
        snaps = (*hs[0].config.snapshot_steps, hs[0].config.steps)
        out[t] = [
            {
                **{T: median_error(*h.snapshots[T], t) for T in snaps},
                "power method": power_method_median(t),
            }
            for h in hs
        ]
    return out


def _exponential(curves) -> tuple[np.ndarray, list[str]]:
    """Per seed, the worst R^2 deficit against the power method's (over
    tasks and snapshots), and the median R^2 per task and snapshot."""
    deficit, rows = [], []
    for t, per_seed in curves.items():
        r2 = [
            {k: semilog_fit(c)[1] for k, c in seed.items()}
            for seed in per_seed
        ]
        deficit.append(
            [max(r["power method"] - v for v in r.values()) for r in r2]
        )
        rows.append(
            f"{TASKS[t]}: "
            + ", ".join(
                f"{k} {np.median([r[k] for r in r2]):.3f}" for k in r2[0]
            )
        )
    return np.max(deficit, axis=0), rows


@claim(
    id="fig5-exponential",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Looping the LN layer's snapshots (T = 100, 300, 2000) for L = 1..25: "
        "'the error decays exponentially as the number of loops L increases' "
        "(both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"per seed: R^2 of log(median error over {POINTS} "
        f"test points) against L within {R2_MARGIN} of the power method's R^2 "
        "on the same "
        "points, every snapshot and task"
    ),
    chapter=CH,
)
def _fig5_exp():
    deficit, rows = _exponential(fig5_curves())
    return over_seeds(
        deficit,
        deficit <= R2_MARGIN,
        "worst R^2 deficit per seed; median R^2 " + "; ".join(rows),
    )


def _ordered(curves, quantity) -> tuple[str, list[str]]:
    """The :func:`ordering` status of ``quantity(curve)`` over the keys of
    each seed's curves (snapshots, then the power method), worst over tasks."""
    worst, rows = "reproduced", []
    for t, per_seed in curves.items():
        keys = list(per_seed[0])
        status, line = ordering(
            {str(k): [quantity(s[k]) for s in per_seed] for k in keys}
        )
        worst = max(worst, status, key=STATUSES.index)
        rows.append(f"{TASKS[t]}: {status}: {line}")
    return worst, rows


@claim(
    id="fig5-median",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5 (over many test points)",
    statement=(
        f"Over {POINTS} test matrices per task, the median error of the LN "
        "layer's snapshots "
        "looped 25 times is ordered T = 100 above T = 300 above T = 2000 "
        "above the power "
        "method (both tasks)"
    ),
    paper="larger T closer to the power method",
    tolerance="the ordering over the seed ensemble (lnpower.claims.ordering)",
    chapter=CH,
    source="book",
)
def _fig5_median():
    status, rows = _ordered(fig5_curves(), lambda c: c[24])
    return status, status, "; ".join(rows)


@claim(
    id="fig5-closer-with-T",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Snapshots trained longer have error curves closer to the power "
        "method's (a faster per-loop rate) (both tasks)"
    ),
    paper="T = 2000 closest",
    tolerance=(
        f"per-loop rates fitted to the median error over {POINTS} test "
        "points, decreasing in T and above the power method's, over the seed "
        "ensemble "
        "(lnpower.claims.ordering)"
    ),
    chapter=CH,
)
def _fig5_order():
    status, rows = _ordered(fig5_curves(), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


@claim(
    id="fig5-exponential-epochs",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Fig. 5's 'the error decays exponentially' with T read as epochs "
        "(snapshots at 100, 300 and 2000 epochs), on the stored SGD runs"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        "as fig5-exponential, on the stored runs at the epoch reading (one "
        "seed)"
    ),
    chapter=CH,
)
def _fig5_exp_epochs():
    deficit, rows = _exponential(fig5_curves("epochs"))
    return over_seeds(
        deficit, deficit <= R2_MARGIN, "median R^2 " + "; ".join(rows)
    )


@claim(
    id="fig5-closer-with-T-epochs",
    ref="thm-4-6",
    where="Theorem 4.6; Appendix G.1, Fig. 5",
    statement=(
        "Fig. 5's 'models trained longer are closer to the power method' with "
        "T read as epochs, on the stored SGD runs"
    ),
    paper="T = 2000 closest",
    tolerance=(
        "as fig5-closer-with-T, on the stored runs at the epoch reading (one "
        "seed, so no spread: an ordering that holds is reproduced)"
    ),
    chapter=CH,
)
def _fig5_order_epochs():
    status, rows = _ordered(fig5_curves("epochs"), lambda c: semilog_fit(c)[0])
    return status, status, "; ".join(rows)


def g3_curves(histories: dict | None = None) -> dict:
    """Per task, per seed of the looped model, its median error curve (L =
    1..25) over :func:`points`, and the power method's."""
    histories = histories or ensemble("looped")
    return {
        t: [
            {
                "looped model": median_error(h.W, h.V, t),
                "power method": power_method_median(t),
            }
            for h in hs
        ]
        for t, hs in histories.items()
    }


@claim(
    id="g3-exponential",
    ref="thm-4-7",
    where="Theorem 4.7; Appendix G.3",
    statement=(
        "The looped model (trained with L = 10, T = 2000) looped L = 1..25 "
        "times: 'the error decays exponentially as the number of layers L "
        "increases' (both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"per seed: R^2 of log(median error over {POINTS} test points) "
        "against L within "
        f"{R2_MARGIN} of the power method's on the same points, and the "
        "median error at "
        "L = 25 below that at L = 10, both tasks"
    ),
    chapter=CH_G,
)
def _g3():
    curves = g3_curves()
    deficit, rows = _exponential(curves)
    falls = np.all(
        [
            [c["looped model"][24] < c["looped model"][9] for c in per]
            for per in curves.values()
        ],
        axis=0,
    )
    return over_seeds(
        deficit,
        (deficit <= R2_MARGIN) & falls,
        "worst R^2 deficit per seed; median R^2 "
        + "; ".join(rows)
        + f"; error falls from L = 10 to 25 for {int(falls.sum())} seeds",
    )


def structured_curves(gammas: dict, task: str) -> dict:
    """Median error curves (L = 1..25) over :func:`points` of structured
    layers, one per ``gammas`` entry (label -> gamma or rho): the shifted
    power method (4.2)."""
    X, a = points(task)
    P = tasks.principal_projector(X)[0]
    return {
        k: np.median(
            inference.sin_angle(
                inference.power_method(X, a, 25, g), P
            ).numpy(),
            axis=1,
        )
        for k, g in gammas.items()
    }


@claim(
    id="g3-exponential-epochs",
    ref="thm-4-7",
    where="Theorem 4.7; Appendix G.3",
    statement=(
        "G.3's sentence with T read as 2000 epochs (156 000 iterations), for "
        "the looped model that population gradient descent trains: structured "
        "weights with rho_T from the population recursion, looped L = 1..25 "
        "times (both tasks)"
    ),
    paper="a straight line on semi-log axes",
    tolerance=(
        f"R^2 of log(median error over {POINTS} test points) within "
        f"{R2_MARGIN} of the power "
        "method's, and the error at L = 25 below that at L = 10 (population; "
        "SGD at this "
        "reading takes about 70 min on 2 cores and is not run)"
    ),
    chapter=CH_G,
)
def _g3_epochs():
    deficit, rows = [], []
    for t in TASKS:
        _, (steps, w, v) = looped_run(t)
        rho = float(np.interp(READINGS["epochs"], steps, w * v))
        c = structured_curves({"looped": rho}, t)["looped"]
        r2, pm = semilog_fit(c)[1], semilog_fit(power_method_median(t))[1]
        deficit.append(pm - r2 if c[24] < c[9] else np.inf)
        rows.append(
            f"{TASKS[t]}: rho_T {rho:.1f}, R^2 {r2:.3f} (power method "
            f"{pm:.3f})"
        )
    return (
        round(max(deficit), 4),
        verdict(max(deficit) <= R2_MARGIN),
        "; ".join(rows),
    )
