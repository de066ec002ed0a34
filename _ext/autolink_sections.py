"""Sphinx extension: let sphinx-codeautolink walk pages with untitled
sections.

sphinx-proof and sphinx-exercise put their contents in ``section`` nodes
without a title. sphinx-codeautolink (0.20) pushes a section's title when it
meets one but pops on leaving every section, so an untitled section empties
its stack and the build stops with ``IndexError: pop from empty list``. Here
it pops only what a section pushed.
"""

from docutils import nodes
from sphinx_codeautolink.extension.block import CodeBlockAnalyser


def _depart_section(self, node) -> None:
    if any(isinstance(child, nodes.title) for child in node.children):
        self.title_stack.pop()


def setup(app):
    CodeBlockAnalyser.depart_section = _depart_section
    return {"parallel_read_safe": True, "parallel_write_safe": True}
