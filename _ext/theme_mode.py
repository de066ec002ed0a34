"""Sphinx extension: the theme's colour mode defaults to "auto".

sphinx-book-theme leaves pydata-sphinx-theme's ``default_mode`` (a
variable of the pages' ``html_context``, not a theme option) empty, so
on a reader's first visit (no mode in the browser's storage) every page logs
a console error, "Got invalid theme mode: . Resetting to auto.", before the
theme falls back to "auto". Set to "auto", the page starts in the same mode
without the error (the browser check fails on console errors).
"""


def default_mode(app, config):
    if not config.html_context.get("default_mode"):
        config.html_context["default_mode"] = "auto"


def setup(app):
    app.connect("config-inited", default_mode)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
