"""The scripts of the interactive figures (``lnpower.interactive``),
shipped with the site and loaded only by the pages that show one.

- Vega, Vega-Lite and Vega-Embed, as one script that ``vl-convert-python``
  bundles for the Vega-Lite version of the installed Altair:
  ``_static/lnpower-interactive/vega.js``, in the head of every page whose
  body draws a chart (``class="... lnpower-vega"``);
- DataTables with its extensions, as ITables packs them:
  ``datatables.js`` and ``dt_bundle.css``, in the head of every page with a
  table (``class="... lnpower-datatable"``).

Both are classic scripts wrapped in a function, so that their top-level
names do not meet the page's own (Sphinx declares ``_``), and so that a
page opened from disk (``file://``, where browsers refuse ES modules) runs
them too: ITables' bundle is a module, whose one ``export`` becomes
``window.lnpowerDataTables``. Nothing is fetched from the network, and
nothing goes under the book's own ``_static/`` (Jupyter Book loads every
script there on every page).
"""

from __future__ import annotations

import re
from pathlib import Path

FOLDER = "lnpower-interactive"
VEGA = "vega.js"
DATATABLES = "datatables.js"
DATATABLES_CSS = "dt_bundle.css"
GLOBAL = "lnpowerDataTables"  # what lnpower.interactive reads
EXPORT = re.compile(r"export\s*\{([^}]*)\}\s*;?")


def wrapped(script: str) -> str:
    """A classic script whose top-level names stay its own."""
    return "(function () {\n" + script + "\n})();\n"


def classic(module: str, name: str) -> str:
    """An ES module without imports, as a classic script that assigns what
    the module exports to ``window[name]``; ``ValueError`` for a module
    with imports or other than one ``export { ... }``."""
    exports = EXPORT.findall(module)
    if len(exports) != 1 or re.search(r"\bimport\s*[{(*\"'.]", module):
        raise ValueError("not a bundle of one export and no import")
    pairs = [part.split(" as ") for part in exports[0].split(",")]
    members = ",".join(
        f"{alias.strip()}:{local.strip()}" for local, alias in pairs
    )
    return wrapped(EXPORT.sub(f"window.{name}={{{members}}};", module))


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
    return wrapped(vl_convert.javascript_bundle(vl_version=version))


def datatables_bundle() -> dict[str, bytes]:
    """ITables' DataTables bundle as a classic script, and its style."""
    import itables

    html = Path(itables.__file__).parent / "html"
    module = (html / "dt_bundle.js").read_text(encoding="utf-8")
    return {
        DATATABLES: classic(module, GLOBAL).encode(),
        DATATABLES_CSS: (html / "dt_bundle.css").read_bytes(),
    }


def write(static: Path) -> dict[str, int]:
    """Write the scripts into the built site's ``static`` folder; their
    sizes in bytes. A file already there with the same bytes is kept, and
    one that is no longer written is removed."""
    folder = static / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    files = {VEGA: vega_bundle().encode(), **datatables_bundle()}
    for old in folder.iterdir():
        if old.name not in files:
            old.unlink()
    for name, data in files.items():
        path = folder / name
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
    return {name: len(data) for name, data in files.items()}


def add_scripts(app, pagename, templatename, context, doctree):
    # the class attribute of the figures' divs (lnpower.interactive)
    body = context.get("body", "")
    if 'class="lnpower-interactive lnpower-vega"' in body:
        app.add_js_file(f"{FOLDER}/{VEGA}")
    if 'class="lnpower-interactive lnpower-datatable"' in body:
        app.add_js_file(f"{FOLDER}/{DATATABLES}")
        app.add_css_file(f"{FOLDER}/{DATATABLES_CSS}")


def write_scripts(app, exception):
    if exception is None and app.builder.format == "html":
        write(Path(app.outdir) / "_static")


def setup(app):
    app.connect("html-page-context", add_scripts)
    app.connect("build-finished", write_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
