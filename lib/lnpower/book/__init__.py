"""The book's own tooling, apart from the science: the coursework
(``assignments``, which gathers ``exercises``, ``editions`` and ``grading``;
``otter`` for Otter-Grader), the chapters' display helpers (``display``),
their Colab set-up cells (``colab``) and the training benchmark (``bench``)."""
