"""Figures of training: growth of the active weights, losses, ensembles,
local exponents and Fig. 3."""

from __future__ import annotations

import matplotlib as mpl
import numpy as np

from ..history import History
from .base import band, color, finish, reference, style, subplots


def growth(
    histories: dict[str, History], power: float, loglog: bool = True, ax=None
):
    """Active weights against t (Figs. 1 and 4): solid the first weight (w
    or alpha), dashed the second (v or beta), one colour per run; on log-log
    axes a dotted ``t^power`` reference through the last point of the first
    run's second weight, shifted down by a factor 2 so that it stays
    visible."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    first = next(iter(histories.values()))
    a, b = (
        (r"\alpha_t", r"\beta_t")
        if first.config.model == "layer"
        else ("w_t", "v_t")
    )
    with style():
        for i, (label, h) in enumerate(histories.items()):
            t = np.arange(1, len(h.w))
            c = color(label, i)
            ax.plot(
                t, np.asarray(h.w)[1:], "-", color=c, label=f"${a}$, {label}"
            )
            ax.plot(
                t, np.asarray(h.v)[1:], "--", color=c, label=f"${b}$, {label}"
            )
        if loglog:
            t = np.arange(1, len(first.w))
            ref = t**power * (first.v[-1] / t[-1] ** power) / 2
            reference(ax, t, ref, rf"$\propto t^{{{power:.3g}}}$")
            ax.set_xscale("log")
            ax.set_yscale("log")
    return fig, finish(ax, "SGD step $t$", "active weight")


def losses(
    histories: dict[str, History],
    test: bool = False,
    ax=None,
    logy: bool = True,
    colors: dict | None = None,
    legend: bool = True,
):
    """Training loss (solid) and, with ``test``, test loss (dotted, same
    colour) against the step on log axes from t = 1 (Figs. 2 and 3)."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    with style():
        for i, (label, h) in enumerate(histories.items()):
            c = (colors or {}).get(label, color(label, i))
            steps = np.asarray(h.steps)
            keep = steps >= 1
            ax.plot(
                steps[keep],
                np.asarray(h.train_loss)[keep],
                "-",
                color=c,
                label=f"{label}, train" if test else label,
            )
            if test:
                ax.plot(
                    steps[keep],
                    np.asarray(h.test_loss)[keep],
                    ":",
                    color=c,
                    lw=2,
                    label=f"{label}, test",
                )
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
    return fig, finish(ax, "SGD step $t$", "loss", legend=legend)


def ensemble_losses(
    runs: dict[str, list[History]], ax=None, test: bool = False
):
    """Fig. 2 over a seed ensemble: per label the median training loss (or
    test loss) with its 10-90 % band against the step, log-log from t = 1."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    for i, (label, hs) in enumerate(runs.items()):
        steps = np.asarray(hs[0].steps)
        keep = steps >= 1
        ys = [
            np.asarray(h.test_loss if test else h.train_loss)[keep] for h in hs
        ]
        band(ax, steps[keep], ys, color(label, i), label)
    with style():
        ax.set_xscale("log")
        ax.set_yscale("log")
    which = "test" if test else "training"
    return fig, finish(
        ax, "SGD step $t$", f"{which} loss (median of {len(hs)} seeds)"
    )


def ensemble_growth(runs: dict[str, list[History]], power: float, ax=None):
    """Figs. 1 and 4 over a seed ensemble, log-log: per run label, the
    median of each active weight (solid the first, dashed the second) with
    its 10-90 % band, and a dotted ``t^power`` reference."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    first = next(iter(runs.values()))[0]
    a, b = (
        (r"\alpha_t", r"\beta_t")
        if first.config.model == "layer"
        else ("w_t", "v_t")
    )
    t = np.arange(1, len(first.w))
    for i, (label, hs) in enumerate(runs.items()):
        c = color(label, i)
        band(ax, t, [h.w[1:] for h in hs], c, f"${a}$, {label}")
        band(ax, t, [h.v[1:] for h in hs], c, f"${b}$, {label}", "--")
    hs0 = next(iter(runs.values()))
    ref = t**power * (np.median([h.v[-1] for h in hs0]) / t[-1] ** power) / 2
    reference(ax, t, ref, rf"$\propto t^{{{power:.3g}}}$")
    with style():
        ax.set_xscale("log")
        ax.set_yscale("log")
    return fig, finish(
        ax, "SGD step $t$", f"active weight (median of {len(hs0)} seeds)"
    )


def local_exponents(
    ax,
    series: dict,
    limits: dict,
    mark: float | None = None,
    colors: dict | None = None,
):
    """Local growth exponents d log y / d log t of (t, y) series against t,
    each with its limit as a dotted line; ``mark`` a vertical line (e.g. the
    paper's T); ``colors`` per label (default: the default colour cycle)."""
    with style():
        for i, (label, (t, y)) in enumerate(series.items()):
            lt, ly = np.log(t[1:]), np.log(y[1:])
            c = (colors or {}).get(label, f"C{i}")
            (line,) = ax.semilogx(
                t[1:], np.gradient(ly, lt), color=c, label=label
            )
            ax.axhline(
                limits[label],
                color=line.get_color(),
                ls=":",
                lw=1.4,
                label=f"its limit, {limits[label]:.3g}",
            )
        if mark is not None:
            ax.axvline(mark, color="k", lw=0.8, ls="--", label=f"t = {mark:g}")
    return finish(ax, "step $t$", "local growth exponent")


def fig3(runs: dict):
    """Fig. 3: training (solid) and test (dotted) loss of the LN layer for
    every (d, n), one panel per task, one colour per (d, n) in both panels,
    one legend for the figure. ``runs`` maps (task, d, n) to a History."""
    configs = sorted({(d, n) for _, d, n in runs})
    colors = {c: f"C{i}" for i, c in enumerate(configs)}
    tasks_ = sorted({t for t, _, _ in runs}, key=lambda t: t != "sphere")
    fig, axes = subplots(len(tasks_), height=3.8, sharey=True)
    with style():
        for ax, task in zip(np.atleast_1d(axes), tasks_):
            for (t, d, n), h in runs.items():
                if t == task:
                    losses(
                        {f"d={d}, n={n}": h},
                        test=True,
                        ax=ax,
                        legend=False,
                        colors={f"d={d}, n={n}": colors[d, n]},
                    )
            ax.set_title("Task 1" if task == "sphere" else "Task 2")
        handles = [
            mpl.lines.Line2D(
                [], [], color=colors[c], label=f"d = {c[0]}, n = {c[1]}"
            )
            for c in configs
        ]
        handles += [
            mpl.lines.Line2D([], [], color="k", ls="-", label="train"),
            mpl.lines.Line2D([], [], color="k", ls=":", lw=2, label="test"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncol=4)
    return fig, axes
