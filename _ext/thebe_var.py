"""Sphinx extension: make sphinx-thebe's inline configuration safe to
include twice.

The book theme renders every inline <script> body twice on each page.
sphinx-thebe's body declares ``const THEBE_JS_URL = ...``, and a second
``const`` declaration is a JavaScript error ("Identifier 'THEBE_JS_URL' has
already been declared") on every page. Declared with ``var`` instead, the
repetition is harmless.
"""


def use_var(app, pagename, templatename, context, doctree):
    for js in context.get("script_files", []):
        body = getattr(js, "attributes", {}).get("body")
        if body and "const THEBE_JS_URL" in body:
            js.attributes["body"] = body.replace("const ", "var ")


def setup(app):
    app.connect("html-page-context", use_var)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
