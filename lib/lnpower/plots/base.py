"""The house style (``STYLE``, ``COLORS``, ``style``) and the basic
helpers every figure uses: ``subplots``, ``finish``, ``reference``,
``band``, ``heatmaps``."""

from __future__ import annotations

from contextlib import contextmanager

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch

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
    "looped model": "#17becf",  # in figures that mix tasks or models
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


def band(ax, x, ys, c, label: str | None = None, ls: str = "-"):
    """The median over seeds of ``ys`` (seeds x points) against ``x``, with
    the band from its 10 % to its 90 % quantile (one grey legend entry per
    panel explains the bands)."""
    lo, med, hi = np.quantile(
        np.asarray(ys, dtype=float), [0.1, 0.5, 0.9], axis=0
    )
    with style():
        if BAND not in ax.get_legend_handles_labels()[1]:
            ax.fill_between([], [], color="0.75", lw=0, label=BAND)
        ax.fill_between(x, lo, hi, color=c, alpha=0.25, lw=0)
        ax.plot(x, med, ls, color=c, lw=1.5, ms=3, label=label)
