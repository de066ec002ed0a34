"""One cache for what the book computes more than once: results on disk,
each in a folder ``KIND/KEY`` of ``$LNPOWER_CACHE`` (default
``~/.cache/lnpower``), and memos within one process (:func:`memo`).

A key says what the result is, so that a reader can find it with ``ls``:

- a training run's key is built by one function,
  :func:`lnpower.train.run_key`: the numbers version of the training code,
  the seed shift and the settings that differ from the defaults, e.g.
  ``fit/numbers=1,shift=0,task=rotated,model=looped,seed=2,snapshot_steps=
  100+300`` (the settings in the order of ``TrainConfig``'s fields; the
  run's ``history.pt`` holds its whole configuration);
- any other result's key is :func:`code_key`: its inputs spelled out, the
  seed shift and a short hash of the code that computes it (the module that
  asks and every library module it imports, docstrings, comments and layout
  aside; and the torch version), e.g.
  ``claim/claim=ln-zero-blocks,stored=...,shift=0,code=3fa2c1d9e0b4``.
  Editing that code
  computes the result again; editing any other module does not.

Entries are written to a temporary folder and renamed into place: an
interrupted run leaves no half-written entry. Delete the folder to start
cold."""

from __future__ import annotations

import ast
import contextlib
import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from . import seeding

HERE = Path(__file__).parent  # the package, whose import graph keys results
# results stored with the library, which the package ships: the runs too long
# to train in a chapter (lnpower.chapters.stored_runs) and where's table
STORED = HERE / "stored_runs"


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


# --- keys


def readable_key(**inputs) -> str:
    """``inputs`` as a key: ``name=value`` pairs joined by commas, in the
    order given (tuples joined by ``+``), with any character a folder name
    should not hold replaced by ``_``; a key longer than 150 characters is
    cut and ends in a hash of the whole."""
    parts = []
    for k, v in inputs.items():
        if isinstance(v, (tuple, list)):
            v = "+".join(map(str, v))
        parts.append(f"{k}={v}")
    text = re.sub(r"[^A-Za-z0-9._=,+-]", "_", ",".join(parts))
    if len(text) > 150:
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        text = f"{text[:130]},hash={digest}"
    return text


def code_key(module: str, **inputs) -> str:
    """The key of a result that the library module ``module`` (its
    ``__name__``) computes from ``inputs``: the inputs spelled out, the seed
    shift, and a hash of the code of ``module`` and of every library module
    it imports (:func:`closure`) and the torch version."""
    code = code_hash(closure(_path_name(module)))[:12]
    return readable_key(**inputs, shift=seeding.shift(), code=code)


def _path_name(module: str) -> str:
    """``"lnpower.chapters.with_ln"`` -> ``"chapters/with_ln"``."""
    return module.removeprefix("lnpower.").replace(".", "/")


def code_hash(modules: tuple[str, ...], torch_version=True) -> str:
    """A hash of the code of the named modules (``"chapters/with_ln"``;
    not their docstrings, comments or layout) and the torch version (unless
    ``torch_version`` is False)."""
    h = hashlib.sha256(torch.__version__.encode() if torch_version else b"")
    for m in modules:
        h.update(_code(m))
    return h.hexdigest()[:20]


def data_hash(*xs) -> str:
    """A short hash of the contents of numpy arrays (or lists of floats): a
    key's input that names data by what it holds."""
    h = hashlib.sha256()
    for x in xs:
        x = np.ascontiguousarray(x, dtype=np.float64)
        h.update(str(x.shape).encode())
        h.update(x.tobytes())
    return h.hexdigest()[:20]


# --- the library's import graph: what a code key covers


def _module_file(parts: list[str]) -> Path | None:
    """The file of the library module ``parts`` (``["claims", "status"]``),
    if any."""
    for path in (
        HERE.joinpath(*parts).with_suffix(".py"),
        HERE.joinpath(*parts, "__init__.py"),
    ):
        if parts and path.exists():
            return path
    return None


def imports(module: str) -> set[str]:
    """The library modules that ``module`` (``"chapters/with_ln"``)
    imports, anywhere in its code."""
    path = _module_file(module.split("/"))
    package = module.split("/")[:-1]  # "norms/__init__" is in "norms" too
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            bases = [
                a.name.split(".")[1:]
                for a in node.names
                if a.name.split(".")[0] == "lnpower"
            ]
            names = []
        elif isinstance(node, ast.ImportFrom):
            mod = node.module.split(".") if node.module else []
            if node.level:
                bases = [package[: len(package) - node.level + 1] + mod]
            elif mod[:1] == ["lnpower"]:
                bases = [mod[1:]]
            else:
                continue
            names = [a.name for a in node.names]
        else:
            continue
        for base in bases:
            for parts in (base, *(base + [n] for n in names)):
                file = _module_file(parts)
                if file is not None:
                    found.add(_name(file))
    return found


def _name(path: Path) -> str:
    """A module's name as the graph takes it: ``"claims/status"``, or
    ``"claims/__init__"`` for a package."""
    return path.relative_to(HERE).with_suffix("").as_posix()


@functools.cache
def closure(module: str) -> tuple[str, ...]:
    """``module`` and every library module it imports, directly or through
    others: the code a result computed by ``module`` can depend on."""
    first = _name(_module_file(module.split("/")))
    seen, todo = set(), [first]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo += imports(m) - seen
    return tuple(sorted(seen))


def _code(module: str) -> bytes:
    """A module's code without its docstrings, comments and layout: what it
    computes, so that editing prose or formatting keeps the results."""
    path = HERE / f"{module}.py"
    return _normalised(path, path.stat().st_mtime_ns)


@functools.cache
def _normalised(path: Path, mtime_ns: int) -> bytes:
    """:func:`_code` of one file, computed once per version of the file."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


# --- entries on disk


class Busy(RuntimeError):
    """Another process is computing the entry (raised by :func:`cached` with
    ``wait=False``)."""


def cached(
    kind: str,
    key: str,
    compute: Callable,
    save: Callable[[object, Path], None],
    load: Callable[[Path], object],
    cache=True,
    wait=True,
):
    """``compute()``, or the result stored under ``KIND/KEY``.
    ``save(result, folder)`` writes a result into an empty folder,
    ``load(folder)`` reads it back. While one process computes an entry,
    another that asks for it waits and then loads it (a lock file), or,
    with ``wait=False``, raises :class:`Busy` at once so that it can do
    other work first."""
    return cached_many(
        kind, [key], lambda todo: [compute()], save, load, cache, wait
    )[0]


def cached_many(
    kind: str,
    keys: list[str],
    compute: Callable[[list[int]], list],
    save: Callable[[object, Path], None],
    load: Callable[[Path], object],
    cache=True,
    wait=True,
) -> list:
    """:func:`cached` for several results computed together:
    ``compute(todo)`` returns the results of the keys at the indices
    ``todo``, those not stored yet; each result is stored under its own
    key. The locks are taken in the order of the keys, so that processes
    asking for overlapping sets cannot wait on each other forever."""
    entries = [_entry(kind, k, cache) for k in keys]
    if entries[0] is None:
        return compute(list(range(len(keys))))
    out = [load(e) if (e / "done").exists() else None for e in entries]
    todo = [i for i, r in enumerate(out) if r is None]
    if not todo:
        return out
    with contextlib.ExitStack() as stack:
        for i in sorted(todo, key=lambda i: keys[i]):
            entry = entries[i]
            if entry in _HELD:  # this process is computing it already
                continue
            entry.parent.mkdir(parents=True, exist_ok=True)
            lock = stack.enter_context(open(_lock_file(entry), "w"))
            try:
                fcntl.flock(
                    lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB)
                )
            except BlockingIOError:
                raise Busy(f"{kind}/{keys[i]}") from None
        for i in todo:  # computed by a process we waited for
            if (entries[i] / "done").exists():
                out[i] = load(entries[i])
        todo = [i for i in todo if out[i] is None]
        if not todo:
            return out
        held = {entries[i] for i in todo}
        _HELD.update(held)
        try:
            results = compute(todo)
        finally:
            _HELD.difference_update(held)
        for i, result in zip(todo, results):
            _store(entries[i], result, save)
            out[i] = result
    return out


def _entry(kind: str, key: str, cache) -> Path | None:
    where = directory(cache)
    return None if where is None else where / kind / key


def exists(kind: str, key: str, cache=True) -> bool:
    """Whether :func:`cached` would load this entry instead of computing
    it."""
    entry = _entry(kind, key, cache)
    return entry is not None and (entry / "done").exists()


def put(kind: str, key: str, result, save, cache=True) -> None:
    """Store a result computed elsewhere (another process or machine) under
    the entry :func:`cached` reads; an entry already there is kept."""
    entry = _entry(kind, key, cache)
    if entry is not None and not (entry / "done").exists():
        entry.parent.mkdir(parents=True, exist_ok=True)
        _store(entry, result, save)


def forget(kind: str, key: str, cache=True) -> None:
    """Remove a stored entry (a result that must be computed again next
    time)."""
    entry = _entry(kind, key, cache)
    if entry is not None and entry.exists():
        shutil.rmtree(entry, ignore_errors=True)


_HELD: set[Path] = set()  # entries whose lock this process holds


def _lock_file(entry: Path) -> Path:
    """Where the lock of an entry is: a folder of this machine's temporary
    directory, so that the cache holds entries only."""
    locks = Path(tempfile.gettempdir()) / "lnpower-locks"
    locks.mkdir(exist_ok=True)
    digest = hashlib.sha256(str(entry.resolve()).encode()).hexdigest()[:16]
    return locks / f"{digest}.lock"


def _store(entry: Path, result, save) -> None:
    """Write ``result`` into ``entry`` atomically (a temporary folder, then
    a rename)."""
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{entry.name[:40]}-", dir=entry.parent)
    )
    try:
        save(result, tmp)
        (tmp / "done").touch()
        if (entry / "done").exists():  # another process stored it meanwhile
            raise FileExistsError(entry)
        if entry.exists():  # an unfinished entry from an interrupted run
            shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)
    except OSError:  # stored by another process first, or the disk is full
        shutil.rmtree(tmp, ignore_errors=True)


def arrays(
    kind: str, key: str, compute: Callable[[], dict], cache=True
) -> dict[str, np.ndarray]:
    """:func:`cached` for a dict of numpy arrays (one ``.npz``)."""
    return cached(
        kind,
        key,
        compute,
        lambda out, folder: np.savez(folder / "arrays.npz", **out),
        lambda folder: dict(np.load(folder / "arrays.npz")),
        cache,
    )


def values(kind: str, key: str, compute: Callable, cache=True):
    """:func:`cached` for a result JSON can write (one ``.json``)."""
    return cached(
        kind,
        key,
        compute,
        lambda out, folder: (folder / "result.json").write_text(
            json.dumps(out, default=float)
        ),
        lambda folder: json.loads((folder / "result.json").read_text()),
        cache,
    )


# --- memos within one process


def memo(fn: Callable | None = None, *, maxsize: int | None = None):
    """``functools.lru_cache`` (unbounded by default) for a function of
    hashable arguments whose result depends on the seed shift too: the memo
    is keyed on ``LNPOWER_SEED`` as well as on the arguments. Use as
    ``@memo`` or ``@memo(maxsize=8)``."""
    if fn is None:
        return functools.partial(memo, maxsize=maxsize)
    at_shift = functools.lru_cache(maxsize)(
        lambda shift, *args, **kw: fn(*args, **kw)
    )

    @functools.wraps(fn)
    def wrapper(*args, **kw):
        return at_shift(seeding.shift(), *args, **kw)

    wrapper.cache_clear = at_shift.cache_clear
    return wrapper


# --- files


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
