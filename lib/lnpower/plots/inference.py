"""Figures of looping at inference: error against the number of loops,
bounds, and the data flow of one loop."""

from __future__ import annotations

import numpy as np

from .base import PAPER_WIDTH, band, color, finish, style, subplots


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
    is drawn black and dashed, the others in a sequence of one colour map
    (not the tasks' colours, which mean Task 1 and Task 2 elsewhere)."""
    import matplotlib.pyplot as plt

    fig, ax = (ax.figure, ax) if ax is not None else subplots()
    others = [k for k in errors if k != "power method"]
    shades = plt.cm.viridis(np.linspace(0.0, 0.8, max(len(others), 1)))
    with style():
        for label, e in errors.items():
            e = np.asarray(e)
            L = np.arange(1, len(e) + 1)
            if label == "power method":
                ax.semilogy(
                    L, e, "--", color="k", lw=1.5, zorder=4, label=label
                )
            else:
                c = shades[others.index(label)]
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
