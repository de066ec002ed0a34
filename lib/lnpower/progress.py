"""Progress bars for long work (training, sweeps)."""

from __future__ import annotations

import os
import sys


def show_progress() -> bool:
    """Progress bars by default in a terminal and in Jupyter or Colab, never
    when ``LNPOWER_PROGRESS=0`` (the book's build and tests set it)."""
    if os.environ.get("LNPOWER_PROGRESS", "1") == "0":
        return False
    return sys.stderr.isatty() or "ipykernel" in sys.modules


def progress_bar(total: int, desc: str, progress: bool | None = None):
    """A tqdm bar that appears only after 2 s (quick work shows nothing):
    the notebook widget in Jupyter and Colab (where ipywidgets is
    installed), text elsewhere."""
    if progress is None:
        progress = show_progress()
    bar = None
    if progress and "ipykernel" in sys.modules:
        try:
            import ipywidgets  # noqa: F401
            from tqdm.notebook import tqdm as bar
        except ImportError:
            pass
    if bar is None:
        from tqdm.std import tqdm as bar
    return bar(
        total=total, desc=desc, disable=not progress, leave=False, delay=2.0
    )
