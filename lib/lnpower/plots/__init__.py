"""The book's figures and their house style. Every function returns ``(fig,
ax)`` (or ``(fig, axes)``) and draws inside the style, so that figures read
the same everywhere:

- legends and labels legible at the rendered width (no font below 8 pt), a
  label on every axis, no tick labels that mean nothing (no negative steps,
  no symlog);
- one colour per configuration across every panel and chapter (``COLORS``);
- the power method always black: dashed beside the models' error curves,
  solid with markers where it is the measured curve of its own bounds
  (:func:`bounds`); references, predictions and limits as thin dotted or
  dashed black or grey lines, keyed in the legend and drawn above the data
  so that they are never hidden;
- bounds clipped at their trivial value (a sine is at most 1).
"""

from .base import (
    COLORS,
    PAPER_WIDTH,
    STYLE,
    band,
    color,
    finish,
    heatmaps,
    reference,
    style,
    subplots,
)
from .inference import bounds, data_flow, error_bands, error_vs_loops
from .training import (
    ensemble_growth,
    ensemble_losses,
    fig3,
    growth,
    local_exponents,
    losses,
)

__all__ = [
    "COLORS",
    "PAPER_WIDTH",
    "STYLE",
    "band",
    "bounds",
    "color",
    "data_flow",
    "ensemble_growth",
    "ensemble_losses",
    "error_bands",
    "error_vs_loops",
    "fig3",
    "finish",
    "growth",
    "heatmaps",
    "local_exponents",
    "losses",
    "reference",
    "style",
    "subplots",
]
