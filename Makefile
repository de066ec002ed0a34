# Two entry points: `make book` and `make test`. Each sets itself up (.venv, the lock, the package).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JB     := $(BIN)/jupyter-book build --warningiserror --nitpick --keep-going .

.PHONY: book test lint unit notebooks standalone browser chromium clean help

help:
	@echo "make book   build the HTML book into _build/html (strict)"
	@echo "make test   lint, unit tests, every notebook (nbval), chapters alone + coursework,"
	@echo "            the strict build and the browser test"
	@echo "make clean  remove _build and the virtual environment"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	@touch $(STAMP)

book: $(STAMP)
	$(JB)
	@echo "Open: $(CURDIR)/_build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check lib tests

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests

notebooks: $(STAMP)
	$(BIN)/python -m pytest -q --nbval-lax --nbval-current-env --nbval-cell-timeout=600 book

standalone: $(STAMP)
	$(BIN)/python tests/standalone_chapters.py

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

browser: $(STAMP) chromium
	$(BIN)/python tests/browser_check.py

test: lint unit notebooks standalone book browser
	@echo "make test: all checks passed"

clean:
	rm -rf _build $(VENV)
