"""The book's figures and their house style. Every function returns ``(fig,
ax)`` (or ``(fig, axes)``) and draws inside the style, so that figures read
the same everywhere:

- legends and labels legible at the rendered width (no font below 8 pt), a
  label on every axis, no tick labels that mean nothing (no negative steps,
  no symlog);
- one colour key, a function of what is drawn (:func:`color`): a task or a
  model keeps its colour in every panel and chapter (``COLORS``); a snapshot
  of a model takes its model's hue, darker the longer it trained
  (:func:`snapshot_color`); the active weights of one run have colours of
  their own (``WEIGHT_COLORS``), and any other family of curves (step sizes,
  sizes, (d, n)) the shades of one colour map (:func:`shades`), never a
  model's colour;
- a band over seeds is promised in a legend only where it can be seen;
- the power method always black: dashed beside the models' error curves,
  solid with markers where it is the measured curve of its own bounds
  (:func:`bounds`); references, predictions and limits as thin dotted or
  dashed black or grey lines, keyed in the legend and drawn above the data
  so that they are never hidden;
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
# The colour key: the tasks and the models, in every figure of the book
COLORS = {
    "Task 1": "#1f77b4",
    "Task 2": "#ff7f0e",  # the two training tasks
    "LN": "#2ca02c",  # the single layer with LN
    "no LN, normalised": "#9467bd",
    "no LN, unnormalised": "#d62728",
    "looped model": "#17becf",
    "Adam": "#8c564b",  # the LN layer trained by Adam (Part V)
    "power method": "black",
}
# the active weights of one run, and their product (w, v, rho or alpha,
# beta, gamma): colours no task or model uses
WEIGHT_COLORS = {"first": "#e377c2", "second": "#bcbd22", "product": "#555555"}
# the statuses of the claims (the reproduction report)
STATUS_COLORS = {
    "reproduced": "#1a7f37",
    "partial": "#9a6700",
    "seed-dependent": "#8250df",
    "inconclusive": "#57606a",
    "not reproduced": "#cf222e",
    "not measured": "#8c959f",
}
PAPER_WIDTH = 10.0  # inches: the rendered column at 100 dpi
BAND = "band: 10-90 % over seeds"


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


def color(key: str) -> str:
    """The colour of a task or a model (``COLORS``), of an active weight
    (``WEIGHT_COLORS``) or of a claim's status; ``ValueError`` for anything
    else, whose colour a figure takes from :func:`shades` instead."""
    for table in (COLORS, WEIGHT_COLORS, STATUS_COLORS):
        if key in table:
            return table[key]
    raise ValueError(
        f"{key!r} has no colour in the key; known: {sorted(COLORS)}, "
        f"{sorted(WEIGHT_COLORS)}, {sorted(STATUS_COLORS)}"
    )


def snapshot_color(model: str, i: int, n: int):
    """The colour of the i-th of n snapshots (0 the earliest) of ``model``
    taken during its training: the model's hue, from light to full."""
    base = np.array(mpl.colors.to_rgb(color(model)))
    mix = 0.25 + 0.75 * (i + 1) / n  # the share of the hue
    return tuple(mix * base + (1 - mix) * np.ones(3))


def shades(n: int) -> list:
    """n colours of one colour map for a family of curves that is not a
    task or a model (step sizes, sizes, (d, n), loops)."""
    return list(plt.cm.viridis(np.linspace(0.0, 0.85, max(n, 1))))


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
    """A panel's labels, title and legend, in the book's style; the legend
    explains the bands of :func:`band` only where one can be seen."""
    with style():
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title)
        labels = ax.get_legend_handles_labels()[1]
        if legend and BAND not in labels and _band_shows(ax):
            ax.fill_between([], [], color="0.75", lw=0, label=BAND)
        if legend and ax.get_legend_handles_labels()[0]:
            ax.legend()
    return ax


def _band_shows(ax) -> bool:
    """Whether a band drawn by :func:`band` on ``ax`` can be seen at the
    axes' limits of now: 2 pixels high or more, on average over its width."""
    ax.autoscale_view()
    for patch in ax.collections:
        if patch.get_gid() != "band":
            continue
        for path in patch.get_paths():
            xy = ax.transData.transform(path.vertices)
            x, y = xy[np.isfinite(xy).all(axis=1)].T
            width = np.ptp(x) if len(x) else 0.0
            area = 0.5 * abs(
                np.dot(x, np.roll(y, 1)) - np.dot(y, np.roll(x, 1))
            )
            if width > 0 and area / width >= 2:
                return True
    return False


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


def band(ax, x, ys, c, label: str | None = None, ls: str = "-"):
    """The median over seeds of ``ys`` (seeds x points) against ``x``, with
    the band from its 10 % to its 90 % quantile; :func:`finish` gives the
    panel one grey legend entry that explains the bands, only where a band
    can be seen at the panel's final limits."""
    lo, med, hi = np.quantile(
        np.asarray(ys, dtype=float), [0.1, 0.5, 0.9], axis=0
    )
    with style():
        ax.fill_between(x, lo, hi, color=c, alpha=0.25, lw=0, gid="band")
        ax.plot(x, med, ls, color=c, lw=1.5, ms=3, label=label)


# --- looping at inference


def error_bands(
    curves: list[dict],
    ax=None,
    ylabel: str = r"median $\sin\phi_L$",
    model: str = "LN",
):
    """Figs. 5 and G.3 over a seed ensemble: per key, the median over seeds
    of each seed's curve (L = 1, 2, ...) with its 10-90 % band, semi-log;
    ``"power method"`` black and dashed, a model named in the key in its
    colour, snapshots (integer keys, the step T) in the shades of ``model``
    (:func:`snapshot_color`)."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    snaps = [k for k in curves[0] if isinstance(k, int)]
    for key in curves[0]:
        ys = [c[key] for c in curves]
        L = np.arange(1, len(ys[0]) + 1)
        if key in snaps:
            c = snapshot_color(model, snaps.index(key), len(snaps))
        else:
            c = color(key)
        band(
            ax,
            L,
            ys,
            c,
            f"T = {key}" if key in snaps else str(key),
            "--" if key == "power method" else "o-",
        )
    with style():
        ax.set_yscale("log")
    return fig, finish(ax, "loops $L$", ylabel)


def error_vs_loops(
    errors: dict,
    ax=None,
    ylabel: str = r"$\sin\phi_L$",
    colors: dict | None = None,
):
    """Error (sine of the angle to the principal subspace) against the
    number of loops L, semi-log (Figs. 5, G.3); the key ``"power method"``
    is drawn black and dashed, the others in ``colors`` (a key's colour from
    the colour key) or else in the shades of one colour map (not a task's or
    a model's colour)."""
    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    others = [k for k in errors if k != "power method"]
    family = shades(len(others))
    with style():
        for label, e in errors.items():
            e = np.asarray(e)
            L = np.arange(1, len(e) + 1)
            if label == "power method":
                ax.semilogy(
                    L, e, "--", color="k", lw=1.5, zorder=4, label=label
                )
            else:
                c = (colors or {}).get(label, family[others.index(label)])
                ax.semilogy(L, e, "o-", ms=3, color=c, label=str(label))
    return fig, finish(ax, "loops $L$", ylabel)


def bounds(ax, L, lower, upper, error, label: str, c, key: bool = False):
    """An error curve and its bounds (Theorems 4.6, 4.7) as dotted lines in
    the curve's colour, the upper bound cut at the trivial value
    sin(phi) <= 1; ``key`` adds the legend entries that explain the dotted
    lines and the grey line at 1 where the upper bounds are cut."""
    top = np.minimum(upper, 1.0)
    with style():
        for edge in (lower, top):
            ax.semilogy(L, edge, ":", color=c, lw=1.4)
        ax.semilogy(L, error, "o-", ms=3, color=c, label=label)
        if key:
            ax.plot([], [], ":", color="0.4", lw=1.4, label="its bounds")
            ax.axhline(1.0, color="0.6", lw=0.8, label="upper bounds cut at 1")
        else:
            ax.axhline(1.0, color="0.6", lw=0.8)
    return ax


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


# --- training


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
        family = shades(len(histories))
        for i, (label, h) in enumerate(histories.items()):
            t = np.arange(1, len(h.w))
            c = color(label) if label in COLORS else family[i]
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
    family = shades(len(histories))
    with style():
        for i, (label, h) in enumerate(histories.items()):
            c = (colors or {}).get(label)
            if c is None:
                c = color(label) if label in COLORS else family[i]
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
    for label, hs in runs.items():
        steps = np.asarray(hs[0].steps)
        keep = steps >= 1
        ys = [
            np.asarray(h.test_loss if test else h.train_loss)[keep] for h in hs
        ]
        band(ax, steps[keep], ys, color(label), label)
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
    for label, hs in runs.items():
        c = color(label)
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
    paper's T); ``colors`` per label (default: the shades of one colour
    map)."""
    family = shades(len(series))
    with style():
        for i, (label, (t, y)) in enumerate(series.items()):
            lt, ly = np.log(t[1:]), np.log(y[1:])
            c = (colors or {}).get(label, family[i])
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
    every (d, n), one panel per task, one colour and one marker per (d, n)
    in both panels (neighbouring shades are close), one legend for the
    figure. ``runs`` maps (task, d, n) to a History."""
    configs = sorted({(d, n) for _, d, n in runs})
    colors = dict(zip(configs, shades(len(configs))))
    markers = dict(zip(configs, "osD^vP*X"))
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
                    for line in ax.lines[-2:]:  # its train and test curves
                        line.set(marker=markers[d, n], markevery=0.15, ms=5)
            ax.set_title("Task 1" if task == "sphere" else "Task 2")
        handles = [
            mpl.lines.Line2D(
                [],
                [],
                color=colors[c],
                marker=markers[c],
                ms=5,
                label=f"d = {c[0]}, n = {c[1]}",
            )
            for c in configs
        ]
        handles += [
            mpl.lines.Line2D([], [], color="k", ls="-", label="train"),
            mpl.lines.Line2D([], [], color="k", ls=":", lw=2, label="test"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncol=4)
    return fig, axes


def floors_inset(ax, runs: dict[str, list[History]], floors: dict):
    """An inset of ``ax`` over the last decade of training: the median
    training loss of each run (their colours from the key) against the
    ``floors`` (label -> (value, line style)), drawn as thin black lines,
    with the y range fitted to them so that close floors stay apart
    (Fig. 2)."""
    ins = ax.inset_axes([0.52, 0.5, 0.44, 0.38])
    lows, highs = [], []
    with style():
        for label, hs in runs.items():
            steps = np.asarray(hs[0].steps)
            keep = steps >= steps[-1] / 10
            med = np.median([np.asarray(h.train_loss)[keep] for h in hs], 0)
            ins.plot(steps[keep], med, color=color(label), lw=2)
            lows.append(med.min())
            highs.append(med.max())
        for value, ls in floors.values():
            ins.axhline(value, color="k", ls=ls, lw=1.0)
            lows.append(value)
            highs.append(value)
        pad = 0.15 * (max(highs) - min(lows))
        ins.set_ylim(min(lows) - pad, max(highs) + pad)
        ins.set_xscale("log")
        first, last = steps[-1] / 10, steps[-1]  # one decade: its two ends
        ins.set_xlim(first, last)
        ins.set_xticks([first, last], [f"{first:.0f}", f"{last:.0f}"])
        ins.xaxis.set_minor_formatter(mpl.ticker.NullFormatter())
        ins.tick_params(labelsize=8)
        ins.set_title("last decade", fontsize=8)
    return ins
