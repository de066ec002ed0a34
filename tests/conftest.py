"""Every unit test process gets an empty disk cache of its own
(``LNPOWER_CACHE``): a test never reads what another test or a chapter
stored, and never fills the reader's cache."""

import pytest


@pytest.fixture(autouse=True, scope="session")
def _own_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("LNPOWER_CACHE", str(tmp_path_factory.mktemp("lnpower-cache")))
    yield
    mp.undo()
