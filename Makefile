# Two entry points: `make book` and `make test`. Each sets itself up (.venv, the lock, the package).
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PKG    := $(VENV)/.lnpower
JB     := $(BIN)/jupyter-book build --warningiserror --nitpick --keep-going .
# no progress bars in the executed notebooks that the book renders and nbval compares
export LNPOWER_PROGRESS := 0
# the book's tooling (tools/lnbook: grading, editions, the build scripts), which
# readers do not install
export PYTHONPATH := $(CURDIR)/tools

.PHONY: book book-instructor public test lint unit notebooks coursework browser chromium clean help fresh-venv

help:
	@echo "make book   build the HTML book into _build/html (strict): the public edition"
	@echo "make book-instructor  the same with the problem sets' answers, into _build/instructor"
	@echo "make test   lint, unit tests, every notebook alone under nbval, the student editions"
	@echo "            graded, the strict build (reusing nbval's runs) and the browser test"
	@echo "make clean  remove _build and the virtual environment"
	@echo "make fresh-venv  the package's extras alone, without the lock, in a new venv"

# uv installs the lock in seconds where pip takes minutes (compiling the bytecode as pip does:
# PYTHONDONTWRITEBYTECODE machines never write it later); torch is the CPU wheel on this
# machine's disk (pip finds it itself; uv is pointed at the file), else pip's torch==2.13.0
UV          := uv==0.13.9
TORCH_WHEEL := $(firstword $(wildcard /opt/wheels/torch-2.13.0+cpu-cp311-*.whl))

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q $(UV)
	$(if $(TORCH_WHEEL),$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python --no-deps $(TORCH_WHEEL),\
	    $(BIN)/python -m pip install -q torch==2.13.0)
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python -r requirements.txt
	@touch $(STAMP)

# lnpower from a wheel, not editable, so that the notebooks (run in empty folders) and the book
# see exactly what a reader installs; reinstalled whenever the library changes
$(PKG): $(STAMP) pyproject.toml $(shell find lib/lnpower -name '*.py' -o -name '*.npz' -o -name '*.json')
	rm -rf build
	$(BIN)/uv pip install -q --compile-bytecode --python $(BIN)/python --no-deps --no-build-isolation --reinstall .
	@touch $(PKG)

# the public edition: each problem set as a student gets it (_ext/editions.py)
book: $(PKG)
	$(BIN)/python -m lnbook.book_cache drop-stale
	$(JB)
	$(BIN)/python -m lnbook.book_cache stamp-pages
	@echo "Open: $(CURDIR)/_build/html/index.html"

# the instructor edition, with the reference answers, from the same execution cache
INSTRUCTOR := _build/instructor
book-instructor: $(PKG)
	$(BIN)/python -m lnbook.book_cache drop-stale
	mkdir -p $(INSTRUCTOR)/_build && ln -sfn $(CURDIR)/_build/.jupyter_cache $(INSTRUCTOR)/_build/.jupyter_cache
	LNBOOK_EDITION=instructor $(JB) --path-output $(INSTRUCTOR)
	$(BIN)/python -m lnbook.public_check --instructor
	@echo "Open: $(CURDIR)/$(INSTRUCTOR)/_build/html/index.html"

# no reference answer on the public site
public: book
	$(BIN)/python -m lnbook.public_check

lint: $(PKG)
	$(BIN)/ruff check lib tests tools book _ext

# two workers, one thread each: the tests' tensors are small, and two threads per process
# only wait on each other
unit: $(PKG)
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n 2 --durations=8 tests

notebooks: $(PKG)
	$(BIN)/python -m lnbook.notebooks

# the problem sets graded in a kernel of a fresh environment that holds only what a
# student's `pip install lnpower` brings (and ipykernel): _build/reader-venv
READER := _build/reader-venv
$(READER)/.installed: $(PKG)
	rm -rf $(READER) && $(BIN)/uv venv -q --python $(BIN)/python $(READER)
	$(if $(TORCH_WHEEL),$(BIN)/uv pip install -q --python $(READER)/bin/python --no-deps $(TORCH_WHEEL),\
	    $(BIN)/uv pip install -q --python $(READER)/bin/python torch==2.13.0)
	$(BIN)/uv pip install -q --compile-bytecode --python $(READER)/bin/python -c requirements.txt . ipykernel
	@touch $@

coursework: $(PKG) $(READER)/.installed
	$(BIN)/python -m lnbook.coursework --otter transformer --jobs 2 --reader $(READER)

chromium:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

browser: $(PKG) chromium
	$(BIN)/python -m lnbook.browser

# notebooks before book: the build renders the outputs nbval recorded instead of re-executing
test: lint unit notebooks coursework book public browser
	@echo "make test: all checks passed"

# the extras [book,test] install a working set-up without the lock: a new venv, torch from
# the wheel (or pip), then `pip install .[book,test]` resolved afresh, and the unit tests
FRESH := _build/fresh-venv
fresh-venv:
	rm -rf $(FRESH) && $(PYTHON) -m venv $(FRESH) && $(FRESH)/bin/python -m pip install -q uv
	$(if $(TORCH_WHEEL),$(FRESH)/bin/uv pip install -q --python $(FRESH)/bin/python --no-deps $(TORCH_WHEEL),\
	    $(FRESH)/bin/python -m pip install -q torch==2.13.0)
	$(FRESH)/bin/uv pip install -q --python $(FRESH)/bin/python ".[book,test]"
	OMP_NUM_THREADS=1 $(FRESH)/bin/python -m pytest -q -n 2 tests
	$(FRESH)/bin/jupyter-book --version

clean:
	rm -rf _build $(VENV)
