"""Where a computation runs: the torch device it asks for, and the memory
free for it (work that would not fit is refused up front, in one line)."""

from __future__ import annotations

import os

import torch


def resolve_device(device: str) -> torch.device:
    """``torch.device(device)`` after checking it exists here;
    ``ValueError`` otherwise."""
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as err:
        raise ValueError(
            f"device {device!r} is not a valid torch device"
        ) from err
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {device!r} requested but no CUDA GPU is available"
        )
    if dev.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device {device!r}: use 'cpu' or 'cuda'")
    return dev


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``); None where
    unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
