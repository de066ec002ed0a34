"""Figures of the paper, from ``History`` objects. Every function returns ``(fig, ax)``."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch

from .history import History


def heatmaps(W: torch.Tensor, V: torch.Tensor, title: str = ""):
    """Heatmaps of ``W/||W||_max`` and ``V/||V||_max`` with the block lines (Figs. 1, 4, 6, 7)."""
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.8), constrained_layout=True)
    d = W.shape[-1] // 2
    for ax, M, name in zip(axes, (W, V), ("W", "V")):
        M = M.detach().cpu().double()
        im = ax.imshow(M / M.abs().max().clamp_min(1e-300), cmap="RdBu_r", vmin=-1, vmax=1)
        ax.axhline(d - 0.5, color="k", lw=0.8)
        ax.axvline(d - 0.5, color="k", lw=0.8)
        ax.set_title(rf"${name}/\|{name}\|_{{\max}}$ {title}")
        ax.set_xticks([0, d, 2 * d - 1])
        ax.set_yticks([0, d, 2 * d - 1])
    fig.colorbar(im, ax=axes, shrink=0.8)
    return fig, axes


def growth(histories: dict[str, History], power: float, loglog: bool = True, ax=None):
    """Active weights against t with a ``t^power`` reference line (Figs. 1 and 4)."""
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 3.6))
    for label, h in histories.items():
        t = np.arange(len(h.w))
        a, b = (r"\alpha_t", r"\beta_t") if h.config.model == "layer" else ("w_t", "v_t")
        ax.plot(t[1:], np.asarray(h.w)[1:], label=f"${a}$ {label}")
        ax.plot(t[1:], np.asarray(h.v)[1:], "--", label=f"${b}$ {label}")
    if loglog:
        h = next(iter(histories.values()))
        t = np.arange(1, len(h.w))
        ref = t**power * (h.v[-1] / t[-1] ** power)
        ax.plot(t, ref, "k:", label=rf"$\propto t^{{{power:.3g}}}$")
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel("SGD step t")
    ax.set_ylabel("active weight")
    ax.legend(fontsize=8)
    return fig, ax


def losses(histories: dict[str, History], test: bool = False, ax=None, logy: bool = True):
    """Training (and test) loss against the step (Figs. 2 and 3)."""
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 3.6))
    for label, h in histories.items():
        (line,) = ax.plot(h.steps, h.train_loss, label=f"{label} (train)")
        if test:
            ax.plot(h.steps, h.test_loss, ":", color=line.get_color(), label=f"{label} (test)")
    ax.set_xscale("symlog", linthresh=1)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("SGD step t")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    return fig, ax


def error_vs_loops(errors: dict[str, np.ndarray], ax=None):
    """Error (sin of the angle to the principal subspace) against loops L, semi-log (Fig. 5)."""
    fig, ax = (ax.figure, ax) if ax is not None else plt.subplots(figsize=(5, 3.6))
    for label, e in errors.items():
        e = np.asarray(e)
        ax.semilogy(np.arange(1, len(e) + 1), e, marker="o", ms=3, label=label)
    ax.set_xlabel("loops L")
    ax.set_ylabel(r"$\sin\phi_L$")
    ax.legend(fontsize=8)
    return fig, ax
