"""Sphinx extension: the ``exec-total`` directive, the sum of MyST-NB's notebook run times.

The status page's ``nb-exec-table`` lists each notebook's run time; this directive states their
total against the book's budget (``:budget:`` seconds): all chapters at the paper's settings
together. The total includes whatever training the notebooks did (none when the trained runs
are already cached), so it is shown, not enforced.
"""

from docutils import nodes
from docutils.parsers.rst import directives
from myst_nb.ext.execution_tables import METADATA_KEY
from myst_nb.sphinx_ import NbMetadataCollector
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective


class ExecTotalNode(nodes.General, nodes.Element):
    """Placeholder, replaced once every notebook has run."""


class ExecTotal(SphinxDirective):
    option_spec = {"budget": directives.positive_int}

    def run(self):
        # documents with an execution table are re-rendered whenever a notebook re-runs
        NbMetadataCollector.set_doc_data(self.env, self.env.docname, METADATA_KEY, True)
        node = ExecTotalNode()
        node["budget"] = self.options.get("budget", 300)
        return [node]


class ExecTotalTransform(SphinxPostTransform):
    default_priority = 8

    def run(self, **kwargs):
        for node in list(self.document.findall(ExecTotalNode)):
            runs = [d["exec_data"]["runtime"] for d in
                    NbMetadataCollector.get_doc_data(self.env).values()
                    if d.get("exec_data") and d["exec_data"].get("runtime") is not None]
            total, budget = sum(runs), node["budget"]
            verdict = "within" if total <= budget else "OVER"
            text = (f"All {len(runs)} notebooks together: {total:.0f} s of execution, {verdict} "
                    f"the budget of {budget} s.")
            para = nodes.paragraph()
            para += nodes.strong(text=text)
            node.replace_self(para)


def setup(app):
    app.add_node(ExecTotalNode)
    app.add_directive("exec-total", ExecTotal)
    app.add_post_transform(ExecTotalTransform)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
