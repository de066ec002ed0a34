"""One disk cache for every computation the book repeats: trained histories
(``train.fit_many``), the normalisation study (``variants.compare``), Monte
Carlo spectra (``montecarlo.draw``), the tables and runs of the reduced
dynamics (``dynamics``) and the claims' measurements.

A result is stored under a key that hashes its inputs, the code of the
library modules that compute it (docstrings, comments and layout aside) and
the torch version, so it is reused only where recomputing would give the
same numbers. Entries are written to a temporary folder and renamed into
place: an interrupted run leaves no half-written entry behind."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from . import seeding
from .codegraph import _code, closure, imports  # noqa: F401 (re-exported)


def directory(cache) -> Path | None:
    """Where results are kept: ``cache`` if a path, ``$LNPOWER_CACHE`` or
    ``~/.cache/lnpower`` if ``True``, nowhere if ``None`` or ``False``."""
    if cache is None or cache is False:
        return None
    if cache is True:
        return Path(
            os.environ.get("LNPOWER_CACHE", Path.home() / ".cache" / "lnpower")
        )
    return Path(cache)


def _hash(modules: tuple[str, ...]):
    h = hashlib.sha256(torch.__version__.encode())
    for mod in modules:
        h.update(_code(mod))
    return h


def code_fingerprint(modules: tuple[str, ...]) -> str:
    """A short hash of the code of the named modules (not their docstrings,
    comments or layout) and the torch version: what a stored result was
    computed by."""
    return _hash(modules).hexdigest()[:20]


def key(inputs, modules: tuple[str, ...]) -> str:
    """A short hash of ``inputs`` (anything JSON can write), the code of the
    named modules of ``lnpower``, the torch version and the seed shift
    (``LNPOWER_SEED``)."""
    h = _hash(modules)
    if seeding.shift():  # other draws, other entries
        h.update(f"seed shift {seeding.shift()}".encode())
    h.update(json.dumps(inputs, sort_keys=True, default=str).encode())
    return h.hexdigest()[:20]


class Busy(RuntimeError):
    """Another process is computing the entry (raised by :func:`cached` with
    ``wait=False``)."""


def cached(
    name: str,
    inputs,
    modules: tuple[str, ...],
    compute: Callable,
    save: Callable[[object, Path], None],
    load: Callable[[Path], object],
    cache=True,
    wait=True,
):
    """``compute()``, or its stored result. ``save(result, folder)`` writes
    a result into an empty folder, ``load(folder)`` reads it back. While one
    process computes an entry, another that asks for it waits and then loads
    it (a lock file in the temporary folder), or, with ``wait=False``,
    raises :class:`Busy` at once so that it can do other work first."""
    entry = _entry(name, inputs, modules, cache)
    if entry is None:
        return compute()
    where = entry.parent
    if (entry / "done").exists():
        return load(entry)
    where.mkdir(parents=True, exist_ok=True)
    if (
        entry in _HELD
    ):  # this process is computing it already (a nested request)
        result = compute()
        _store(entry, result, save)
        return result
    with open(_lock_file(entry), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Busy(entry.name) from None
        if (entry / "done").exists():  # computed by the process we waited for
            return load(entry)
        _HELD.add(entry)
        try:
            result = compute()
        finally:
            _HELD.discard(entry)
        _store(entry, result, save)
    return result


def _entry(name: str, inputs, modules, cache) -> Path | None:
    where = directory(cache)
    return None if where is None else where / f"{name}-{key(inputs, modules)}"


def exists(name: str, inputs, modules: tuple[str, ...], cache=True) -> bool:
    """Whether :func:`cached` would load this entry instead of computing
    it."""
    entry = _entry(name, inputs, modules, cache)
    return entry is not None and (entry / "done").exists()


def put(name: str, inputs, modules, result, save, cache=True) -> None:
    """Store a result computed elsewhere (another process or machine)
    under the entry :func:`cached` reads; an entry already there is
    kept."""
    entry = _entry(name, inputs, modules, cache)
    if entry is not None and not (entry / "done").exists():
        entry.parent.mkdir(parents=True, exist_ok=True)
        _store(entry, result, save)


_HELD: set[Path] = set()  # entries whose lock this process holds


def _lock_file(entry: Path) -> Path:
    """Where the lock of a cache entry is: a folder of this machine's
    temporary directory, so that the cache folder holds entries only."""
    locks = Path(tempfile.gettempdir()) / "lnpower-locks"
    locks.mkdir(exist_ok=True)
    where = hashlib.sha256(str(entry.resolve().parent).encode()).hexdigest()[
        :12
    ]
    return locks / f"{where}-{entry.name}.lock"


def _store(entry: Path, result, save) -> None:
    """Write ``result`` into ``entry`` atomically (a temporary folder, then
    a rename)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}-", dir=entry.parent))
    try:
        save(result, tmp)
        (tmp / "done").touch()
        if (
            entry / "done"
        ).exists():  # another process stored it meanwhile: keep theirs
            raise FileExistsError(entry)
        if entry.exists():  # an unfinished entry from an interrupted run
            shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
    except (
        OSError
    ):  # another process stored the same entry first, or the disk is full
        shutil.rmtree(tmp, ignore_errors=True)


def arrays(
    name: str,
    inputs,
    modules: tuple[str, ...],
    compute: Callable[[], dict],
    cache=True,
) -> dict[str, np.ndarray]:
    """:func:`cached` for a result that is a dict of numpy arrays (stored as
    one ``.npz``)."""
    return cached(
        name,
        inputs,
        modules,
        compute,
        lambda out, folder: np.savez(folder / "arrays.npz", **out),
        lambda folder: dict(np.load(folder / "arrays.npz")),
        cache,
    )


def fingerprint(*xs) -> str:
    """A short hash of the contents of numpy arrays (or lists of floats): a
    cache input that names data by what it holds."""
    h = hashlib.sha256()
    for x in xs:
        x = np.ascontiguousarray(x, dtype=np.float64)
        h.update(str(x.shape).encode())
        h.update(x.tobytes())
    return h.hexdigest()[:20]


def atomic_write(path: Path, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename
    it to ``path``: a reader sees the old file or the new one, never half of
    one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # as an ordinary file, not mkstemp's 0600
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def check_writable(folder: Path) -> Path:
    """Raise ``ValueError`` naming ``folder`` unless files can be created in
    it (made if missing); called before long work whose result goes there."""
    folder = Path(folder)
    try:
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{folder} exists and is not a folder")
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as err:
        raise ValueError(
            f"cannot write to {folder}: {err.strerror or err}"
        ) from err
    return folder
