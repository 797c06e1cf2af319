# Two entry points that work on a fresh machine with python3, git and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kitty-installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)  ## run kitty on a bundled sample mission in a temporary git repo
	$(BIN)/kitty demo

test: $(STAMP) lint  ## lint, type-check and run the whole suite
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check kitty tests benchmarks
	$(BIN)/ruff format --check kitty tests benchmarks
	$(BIN)/mypy

bench: $(STAMP)  ## median wall times of the installed kitty (see benchmarks/README.md)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
