"""The public site's check for reference answers (``lnbook.public_check``):
what counts as an answer line, and how it is found on a rendered page."""

import nbformat
from lnbook import public_check


def _problem_set():
    solution = nbformat.v4.new_code_cell("print(...)")
    solution.metadata["tags"] = ["solution"]
    solution.outputs = [
        nbformat.v4.new_output(
            "stream", name="stdout", text="Task 2: eta_div = 3.7235 exactly\n"
        ),
        nbformat.v4.new_output(  # shown as LaTeX, not as its repr
            "display_data",
            data={
                "text/plain": "<IPython.core.display.Math object>",
                "text/latex": "$x$",
            },
        ),
    ]
    given = nbformat.v4.new_code_cell("print(...)")
    given.outputs = [
        nbformat.v4.new_output(
            "stream", name="stdout", text="the set-up prints this line\n"
        )
    ]
    text = (
        ":::{solution} ex-a\n:class: dropdown\n\n"
        "(i) The larger start aligns **sooner**. It takes the paper's whole"
        " run.\n:::\n"
    )
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell(text), solution, given]
    )


def test_answer_lines_are_the_answers_own_visible_lines():
    lines = public_check.answer_lines(_problem_set())
    assert lines == {
        "Task 2: eta_div = 3.7235 exactly",
        "(i) The larger start aligns sooner.",
        "It takes the paper's whole run.",
    }


def test_an_answer_is_found_across_tags_breaks_and_curled_quotes(tmp_path):
    page = tmp_path / "p.html"
    page.write_text(
        "<p>(i) The larger start aligns <strong>sooner</strong>.\nIt takes"
        " the paper\u2019s whole\nrun.</p><pre>Task 2: eta_div = 3.7235"
        " exactly</pre><script>the set-up prints this line</script>"
    )
    text = public_check._letters(public_check.page_text(page))
    lines = public_check.answer_lines(_problem_set())
    assert all(public_check._letters(x) in text for x in lines)
    assert public_check._letters("the set-up prints this line") not in text
    page.write_text("<p>(i) The larger start aligns <em>later</em>.</p>")
    text = public_check._letters(public_check.page_text(page))
    assert not any(public_check._letters(x) in text for x in lines)


def test_a_problem_page_serves_the_student_edition_and_no_repo_link(tmp_path):
    from lnbook import ROOT
    from lnbook.editions import student_edition

    notebook = ROOT / "book" / "with_ln_problems.ipynb"
    instructor = nbformat.read(notebook, as_version=4)
    served = tmp_path / "_sources" / "book" / notebook.name
    served.parent.mkdir(parents=True)
    nbformat.write(student_edition(instructor), served)
    page = '<a href="../_sources/book/with_ln_problems.ipynb">download</a>'
    assert public_check.served_problems(notebook, tmp_path, page) == []
    nbformat.write(instructor, served)
    colab = (
        '<a href="https://colab.research.google.com/github/o/r/blob/main/'
        'book/with_ln_problems.ipynb">Colab</a>'
    )
    found = public_check.served_problems(notebook, tmp_path, page + colab)
    assert len(found) == 2
