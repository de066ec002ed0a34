"""Every unit test process gets an empty disk cache of its own
(``LNPOWER_CACHE``): a test never reads what another test or a chapter
stored, and never fills the reader's cache. The book's tooling (``lnbook``,
under ``tools/``) is importable here and in the processes tests start."""

import os
from pathlib import Path

import pytest

TOOLS = str(Path(__file__).resolve().parents[1] / "tools")


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("LNPOWER_CACHE", str(tmp_path_factory.mktemp("lnpower-cache")))
    paths = [TOOLS, *filter(None, [os.environ.get("PYTHONPATH")])]
    mp.setenv("PYTHONPATH", os.pathsep.join(paths))
    yield
    mp.undo()
