"""What several test modules share: the command line run as a user runs
it, and the smallest training run worth testing."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# a TrainConfig's fields for a run of seconds (d = 4, n = 8)
TINY_RUN = dict(
    model="layer", d=4, n=8, steps=60, batch=16,
    train_size=200, test_size=50, eval_size=50, log_points=4,
)  # fmt: skip


def cli(*args: str) -> subprocess.CompletedProcess:
    """``python -m lnpower ARGS`` from the repository root, output kept."""
    return subprocess.run(
        [sys.executable, "-m", "lnpower", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
