"""The book's execution cache is dropped when the library changes."""

from lnbook import book_cache


def test_a_cache_of_another_library_is_dropped(tmp_path, monkeypatch):
    lib = tmp_path / "lib" / "lnpower"
    lib.mkdir(parents=True)
    (lib / "model.py").write_text("x = 1\n")
    cache = tmp_path / "_build" / ".jupyter_cache"
    monkeypatch.setattr(book_cache, "ROOT", tmp_path)
    monkeypatch.setattr(book_cache, "CACHE", cache)
    monkeypatch.setattr(book_cache, "STAMP", tmp_path / "_build" / "stamp")
    monkeypatch.setattr(book_cache, "DOCTREES", tmp_path / "_build" / "dt")

    cache.mkdir(parents=True)
    assert book_cache.drop_stale() and not cache.exists()  # never stamped
    cache.mkdir()
    book_cache.stamp()
    assert not book_cache.drop_stale() and cache.exists()
    (lib / "claims.toml").write_text("[[claim]]\n")  # data counts too
    assert book_cache.drop_stale() and not cache.exists()
    book_cache.stamp()
    (lib / "__pycache__").mkdir()
    (lib / "__pycache__" / "model.pyc").write_bytes(b"\0")
    cache.mkdir()
    assert not book_cache.drop_stale()  # compiled files do not


def test_pages_of_another_library_are_read_again(tmp_path, monkeypatch):
    lib = tmp_path / "lib" / "lnpower"
    lib.mkdir(parents=True)
    (lib / "model.py").write_text("x = 1\n")
    build = tmp_path / "_build"
    doctrees = build / ".doctrees"
    monkeypatch.setattr(book_cache, "ROOT", tmp_path)
    monkeypatch.setattr(book_cache, "CACHE", build / ".jupyter_cache")
    monkeypatch.setattr(book_cache, "STAMP", build / "stamp")
    monkeypatch.setattr(book_cache, "DOCTREES", doctrees)
    monkeypatch.setattr(book_cache, "DOCTREES_STAMP", build / "pages")

    doctrees.mkdir(parents=True)
    book_cache.stamp()  # outputs stamped (as nbval does), pages not
    book_cache.drop_stale()
    assert not doctrees.exists()
    doctrees.mkdir()
    book_cache.stamp(pages=True)  # what make book does after a build
    book_cache.drop_stale()
    assert doctrees.exists()
    (lib / "model.py").write_text("x = 2\n")
    book_cache.drop_stale()
    assert not doctrees.exists()
    book_cache.stamp(pages=True)
    doctrees.mkdir()
    ext = tmp_path / "tools" / "lnbook"
    ext.mkdir(parents=True)
    (ext / "editions.py").write_text("STUB = 1\n")  # the stubs' code
    assert not book_cache.drop_stale()  # the outputs stay
    assert not doctrees.exists()  # the pages are read again
