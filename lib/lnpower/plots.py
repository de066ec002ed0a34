"""The book's figures and their house style. Every function returns ``(fig,
ax)`` (or ``(fig, axes)``) and draws inside the style, so that figures read
the same everywhere:

- legends and labels legible at the rendered width (no font below 8 pt), a
  label on every axis, no tick labels that mean nothing (no negative steps,
  no symlog);
- one colour per configuration across every panel and chapter (``COLORS``);
- the power method always black and dashed, references and predictions
  dotted, drawn above the data so that they are never hidden;
- bounds clipped at their trivial value (a sine is at most 1).
"""

from __future__ import annotations

from contextlib import contextmanager

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch

from .history import History

STYLE = {
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.framealpha": 0.85,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
COLORS = {
    "Task 1": "#1f77b4",
    "Task 2": "#ff7f0e",  # the two training tasks
    "LN": "#2ca02c",
    "no LN, normalised": "#9467bd",
    "no LN, unnormalised": "#d62728",
    "power method": "black",
    100: "#fdae61",
    300: "#d7191c",
    2000: "#2c7bb6",
    "Adam": "#8c564b",
}
PAPER_WIDTH = 10.0  # inches: the rendered column at 100 dpi


@contextmanager
def style():
    """The house style, for figures drawn outside this module. Only the
    style's own settings are restored on exit: ``mpl.rc_context`` would
    restore every setting, and so undo the interactive mode that Jupyter's
    inline backend switches on when the first figure is drawn, after which
    no figure would be shown."""
    old = {key: mpl.rcParams[key] for key in STYLE}
    mpl.rcParams.update(STYLE)
    try:
        yield
    finally:
        mpl.rcParams.update(old)


def color(key, fallback: int = 0):
    """The colour of a configuration (``COLORS``), or the ``fallback``-th
    default colour."""
    return COLORS.get(key, f"C{fallback % 10}")


def subplots(ncols: int = 1, nrows: int = 1, height: float = 3.6, **kw):
    """A row (or grid) of panels at the rendered width, in the house style."""
    with style():
        width = PAPER_WIDTH if ncols > 1 else 6.0
        return plt.subplots(
            nrows,
            ncols,
            figsize=(width, height * nrows),
            constrained_layout=True,
            **kw,
        )


def finish(
    ax, xlabel: str, ylabel: str, title: str | None = None, legend: bool = True
):
    with style():
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        if legend and ax.get_legend_handles_labels()[0]:
            ax.legend()
    return ax


def reference(ax, x, y, label: str):
    """A dotted reference or prediction, drawn above the data."""
    with style():
        ax.plot(x, y, ":", color="k", lw=1.6, zorder=5, label=label)


def heatmaps(W: torch.Tensor, V: torch.Tensor, title: str = ""):
    """``W/||W||_max`` and ``V/||V||_max`` with lines between the d x d
    blocks (Figs. 1, 4, 6, 7); ``title`` goes above both panels."""
    fig, axes = subplots(2, height=3.9)
    d = W.shape[-1] // 2
    with style():
        for ax, M, name in zip(axes, (W, V), ("W", "V")):
            M = M.detach().cpu().double()
            im = ax.imshow(
                M / M.abs().max().clamp_min(1e-300),
                cmap="RdBu_r",
                vmin=-1,
                vmax=1,
            )
            ax.axhline(d - 0.5, color="k", lw=0.8)
            ax.axvline(d - 0.5, color="k", lw=0.8)
            ax.set_title(rf"${name}/\|{name}\|_{{\max}}$")
            ax.set_xticks([d / 2 - 0.5, 3 * d / 2 - 0.5], ["1", "2"])
            ax.set_yticks([d / 2 - 0.5, 3 * d / 2 - 0.5], ["1", "2"])
            ax.set_xlabel("block column")
            ax.set_ylabel("block row")
            for s in ax.spines.values():
                s.set_visible(True)
        fig.colorbar(im, ax=axes, shrink=0.85)
        if title:
            fig.suptitle(title)
    return fig, axes


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


def band(ax, x, ys, c, label: str | None = None, ls: str = "-"):
    """The median over seeds of ``ys`` (seeds x points) against ``x``, with
    the band from its 10 % to its 90 % quantile."""
    lo, med, hi = np.quantile(
        np.asarray(ys, dtype=float), [0.1, 0.5, 0.9], axis=0
    )
    with style():
        ax.fill_between(x, lo, hi, color=c, alpha=0.25, lw=0)
        ax.plot(x, med, ls, color=c, lw=1.5, ms=3, label=label)


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


def error_bands(
    curves: list[dict], ax=None, ylabel: str = r"median $\sin\phi_L$"
):
    """Figs. 5 and G.3 over a seed ensemble: per key, the median over seeds
    of each seed's curve (L = 1, 2, ...) with its 10-90 % band, semi-log;
    ``"power method"`` black and dashed."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    for i, key in enumerate(curves[0]):
        ys = [c[key] for c in curves]
        L = np.arange(1, len(ys[0]) + 1)
        pm = key == "power method"
        band(
            ax,
            L,
            ys,
            "k" if pm else color(key, i),
            f"T = {key}" if isinstance(key, int) else str(key),  # snapshots
            "--" if pm else "o-",
        )
    with style():
        ax.set_yscale("log")
    return fig, finish(ax, "loops $L$", ylabel)


def error_vs_loops(errors: dict, ax=None, ylabel: str = r"$\sin\phi_L$"):
    """Error (sine of the angle to the principal subspace) against the
    number of loops L, semi-log (Figs. 5, G.3); the key ``"power method"``
    is drawn black and dashed."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    with style():
        for i, (label, e) in enumerate(errors.items()):
            e = np.asarray(e)
            L = np.arange(1, len(e) + 1)
            if label == "power method":
                ax.semilogy(
                    L, e, "--", color="k", lw=1.5, zorder=4, label=label
                )
            else:
                ax.semilogy(
                    L, e, "o-", ms=3, color=color(label, i), label=str(label)
                )
    return fig, finish(ax, "loops $L$", ylabel)


def bounds(ax, L, lower, upper, error, label: str, c, key: bool = False):
    """An error curve with its band of bounds (Theorems 4.6, 4.7), the upper
    bound clipped at the trivial value sin(phi) <= 1, its edges dotted in
    the curve's colour; ``key`` adds one grey legend entry that explains the
    bands."""
    top = np.minimum(upper, 1.0)
    with style():
        ax.fill_between(L, lower, top, color=c, alpha=0.12, lw=0)
        for edge in (lower, top):  # edges in the curve's colour: bands
            ax.semilogy(L, edge, ":", color=c, lw=1.2)  # stay told apart
        if key:
            ax.fill_between(
                [], [], color="0.7", lw=0, label="between the bounds (dotted)"
            )
        ax.semilogy(L, error, "o-", ms=3, color=c, label=label)
        ax.axhline(1.0, color="0.6", lw=0.8)
    return ax


def local_exponents(ax, series: dict, limits: dict, mark: float | None = None):
    """Local growth exponents d log y / d log t of (t, y) series against t,
    each with its limit as a dotted line; ``mark`` a vertical line (e.g. the
    paper's T)."""
    with style():
        for i, (label, (t, y)) in enumerate(series.items()):
            lt, ly = np.log(t[1:]), np.log(y[1:])
            (line,) = ax.semilogx(
                t[1:], np.gradient(ly, lt), color=f"C{i}", label=label
            )
            ax.axhline(limits[label], color=line.get_color(), ls=":", lw=1.4)
        if mark is not None:
            ax.axvline(mark, color="k", lw=0.8, ls="--")
    return finish(ax, "step $t$", "local growth exponent")


def data_flow():
    """The data flow of one loop of the structured layer (§3.2, the display
    of E^(1)): W12 reads the query, S mixes it with the data, V21 writes it
    back, the skip connection adds the query, LN rescales."""
    steps = [
        (r"$\mathbf{a}$", "the query token\n(bottom half)"),
        (r"$w\,\mathbf{a}$", r"$\mathbf{W}_{12}$ reads" + "\nthe query"),
        (
            r"$w\,\mathbf{S}\mathbf{a}$",
            r"$\mathbf{X}\mathbf{X}^\top=\mathbf{S}$" + "\nmixes in the data",
        ),
        (
            r"$\rho\,\mathbf{S}\mathbf{a}$",
            r"$\mathbf{V}_{21}$ writes back" + "\n" + r"($\rho=wv$)",
        ),
        (
            r"$\mathbf{a}+\rho\,\mathbf{S}\mathbf{a}$",
            "the skip connection\nadds the query",
        ),
        (
            r"$\frac{(\mathbf{I}+\rho\mathbf{S})\mathbf{a}}{\|\cdot\|}$",
            "LN rescales:\nthe next query",
        ),
    ]
    fig, ax = subplots(height=2.6)
    fig.set_size_inches(PAPER_WIDTH, 2.6)
    with style():
        xs = np.linspace(0.07, 0.93, len(steps))
        for i, (x, (value, what)) in enumerate(zip(xs, steps)):
            ax.text(
                x,
                0.62,
                value,
                ha="center",
                va="center",
                fontsize=13,
                bbox={
                    "boxstyle": "round,pad=0.4",
                    "fc": "#eef4fb" if i < 5 else "#e8f5e9",
                    "ec": "0.4",
                },
            )
            ax.text(x, 0.22, what, ha="center", va="center", fontsize=9)
            if i:
                ax.annotate(
                    "",
                    (x - 0.055, 0.62),
                    (xs[i - 1] + 0.055, 0.62),
                    arrowprops={"arrowstyle": "->", "lw": 1.2},
                )
        ax.annotate(
            "",
            (xs[0], 0.85),
            (xs[-1], 0.85),
            arrowprops={
                "arrowstyle": "->",
                "lw": 1.0,
                "ls": "--",
                "connectionstyle": "arc3,rad=0.12",
            },
        )
        ax.text(0.5, 0.97, "next loop", ha="center", va="center", fontsize=9)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.05)
        ax.axis("off")
    return fig, ax


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
