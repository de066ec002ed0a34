"""The book's own tooling, apart from the science: the coursework editions and their graders
(``assignments``, ``otter``), the chapters' Colab set-up cells (``colab``) and the training
benchmark (``bench``)."""
