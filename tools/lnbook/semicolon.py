"""An IPython startup file for the kernels nbval runs: a cell whose last
expression ends in ``;`` displays nothing, as in Jupyter and Colab.

nbval asks the kernel to run cells without storing them in the history
(``store_history=False``), and IPython decides whether to hide a value by
reading the cell from that history (ipython/ipython#14162,
computationalmodelling/nbval#194), so the value would be shown in the
outputs the book renders. This input transformer, a supported IPython
extension point, ends such a cell with ``pass`` instead: its last
statement is then no expression, whose value nothing displays.
``lnbook.notebooks`` installs it in the kernels' own IPython folder."""

from IPython import get_ipython
from IPython.core.displayhook import DisplayHook


def _hide_after_semicolon(lines: list[str]) -> list[str]:
    if DisplayHook.semicolon_at_end_of_expression("".join(lines)):
        return [*lines[:-1], lines[-1].rstrip("\n") + "\n", "pass\n"]
    return lines


get_ipython().input_transformers_post.append(_hide_after_semicolon)
