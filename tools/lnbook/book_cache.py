"""The book's execution cache (``_build/.jupyter_cache``) is keyed by each
notebook's text only, but the outputs depend on the library too: after a
change to ``lib/``, an unchanged chapter would be rendered with outputs the
old library computed. So the cache is stamped with a hash of every
file of ``lib/lnpower`` (code, the claims' ledger, the stored runs), and a
stale cache is dropped before it is used: ``make book`` then executes every
notebook again. The rendered pages (the doctrees) depend as well on the
site's extensions (``_ext``) and on the tooling they call (the public
edition's stubs come from ``tools/lnbook``): their stamp covers those too,
so that a change there reads every page again without executing any.

Usage: ``python -m lnbook.book_cache drop-stale|stamp|stamp-pages``.
"""

from __future__ import annotations

import hashlib
import shutil
import sys

from lnbook import ROOT

CACHE = ROOT / "_build" / ".jupyter_cache"
STAMP = ROOT / "_build" / "jupyter_cache.lnpower"
# Sphinx re-reads only the notebooks whose text changed: pages rendered from
# outputs of another library must be read again, so the doctrees carry a
# stamp of their own
DOCTREES = ROOT / "_build" / ".doctrees"
DOCTREES_STAMP = ROOT / "_build" / "doctrees.lnpower"


def library_hash(pages: bool = False) -> str:
    """A hash of the path and bytes of every file of the library (with
    ``pages``, of the site's extensions and the book's tooling too)."""
    h = hashlib.sha256()
    folders = [ROOT / "lib" / "lnpower"]
    if pages:
        folders += [ROOT / "_ext", ROOT / "tools" / "lnbook"]
    for top in folders:
        for f in sorted(top.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(ROOT)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:20]


def drop_stale() -> bool:
    """Remove the cache if it was not stamped with this library; whether it
    was removed."""
    stale = CACHE.exists() and (
        not STAMP.exists() or STAMP.read_text() != library_hash()
    )
    if stale:
        shutil.rmtree(CACHE)
        print("book cache: the library changed; every notebook runs again")
    if DOCTREES.exists() and (
        not DOCTREES_STAMP.exists()
        or DOCTREES_STAMP.read_text() != library_hash(pages=True)
    ):
        shutil.rmtree(DOCTREES)
        print("book cache: the library changed; every page is read again")
    return stale


def stamp(pages: bool = False) -> None:
    """Record that the cache's outputs (and, with ``pages``, the rendered
    pages) come from this library."""
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(library_hash())
    if pages:
        DOCTREES_STAMP.write_text(library_hash(pages=True))


if __name__ == "__main__":
    actions = {
        "drop-stale": drop_stale,
        "stamp": stamp,
        "stamp-pages": lambda: stamp(pages=True),
    }
    if len(sys.argv) != 2 or sys.argv[1] not in actions:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(actions)}")
    actions[sys.argv[1]]()
