"""The scripts of the interactive figures (``lnpower.plots.interactive``),
shipped with the site and loaded only by the pages that show one.

- Vega, Vega-Lite and Vega-Embed, as one script that ``vl-convert-python``
  bundles for the Vega-Lite version of the installed Altair, written to
  ``_static/lnpower-interactive/vega.js`` and added to the head of every
  page whose body draws a chart (``class="... lnpower-vega"``);
- DataTables with its extensions, as ITables packs it (``dt_bundle.js`` and
  ``.css``), written beside it; a table's own module script imports it.

Nothing is fetched from the network, and nothing goes under the book's own
``_static/`` (Jupyter Book loads every script there on every page).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = "lnpower-interactive"
VEGA = "vega.js"


def vega_bundle() -> str:
    """Vega + Vega-Lite + Vega-Embed for the Vega-Lite version that Altair
    writes (its ``SCHEMA_VERSION``, e.g. v6.4.1 -> 6.4)."""
    import altair
    import vl_convert

    major, minor = altair.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    version = f"{major}.{minor}"
    if version not in vl_convert.get_vegalite_versions():
        raise RuntimeError(
            f"vl-convert {vl_convert.__version__} has no Vega-Lite "
            f"{version} (Altair {altair.__version__} writes it)"
        )
    return vl_convert.javascript_bundle(vl_version=version)


def datatables_bundle() -> dict[str, bytes]:
    """ITables' DataTables bundle: ``dt_bundle.js`` and ``dt_bundle.css``."""
    import itables

    html = Path(itables.__file__).parent / "html"
    return {
        f: (html / f).read_bytes() for f in ("dt_bundle.js", "dt_bundle.css")
    }


def write(static: Path) -> dict[str, int]:
    """Write the scripts into the built site's ``static`` folder; their
    sizes in bytes. A file already there with the same bytes is kept."""
    folder = static / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    files = {VEGA: vega_bundle().encode(), **datatables_bundle()}
    for name, data in files.items():
        path = folder / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    return {name: len(data) for name, data in files.items()}


def add_scripts(app, pagename, templatename, context, doctree):
    if "lnpower-vega" in context.get("body", ""):
        app.add_js_file(f"{FOLDER}/{VEGA}")


def write_scripts(app, exception):
    if exception is None and app.builder.format == "html":
        write(Path(app.outdir) / "_static")


def setup(app):
    app.connect("html-page-context", add_scripts)
    app.connect("build-finished", write_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
