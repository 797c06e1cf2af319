# Two entry points that work on a fresh machine with python3, git and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kitty-installed
# Spec Kitty 3.2.7 in a venv of its own: the oracle of the compatibility tests
# (tests/oracle). Test setup only, never a dependency of kitty.
ORACLE := .oracle-venv/.installed

.PHONY: demo test lint bench mutation clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	@# the distribution was called `kitty` before 0.2: drop it so only kitty-kanban owns the scripts
	@$(BIN)/python -m pip uninstall --quiet --yes kitty >/dev/null 2>&1 || true
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)  ## run kitty on a bundled sample mission in a temporary git repo
	$(BIN)/kitty demo

$(ORACLE):
	rm -rf .oracle-venv && $(PYTHON) -m venv .oracle-venv
	SPEC_KITTY_NO_UPGRADE_CHECK=1 .oracle-venv/bin/python -m pip install --quiet \
		--disable-pip-version-check spec-kitty-cli==3.2.7
	@touch $(ORACLE)

test: $(STAMP) $(ORACLE) lint  ## lint, type-check and run the whole suite
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check kitty tests benchmarks mutation
	$(BIN)/ruff format --check kitty tests benchmarks mutation
	$(BIN)/mypy

mutation: $(STAMP)  ## mutation score of kitty/core, the write path, security, team and cache code (~1 h; MODULES=word picks some)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,mutation]'
	nice -n 15 $(BIN)/python mutation/run.py $(MODULES)

bench: $(STAMP)  ## median wall times of an installed (non-editable) kitty
	rm -rf .bench-venv && $(PYTHON) -m venv .bench-venv
	.bench-venv/bin/python -m pip install --quiet --disable-pip-version-check .
	$(BIN)/python benchmarks/bench.py --kitty .bench-venv/bin/kitty
	$(BIN)/python benchmarks/remote_claims.py --kitty .bench-venv/bin/kitty

clean:
	rm -rf $(VENV) .oracle-venv .bench-venv .mutation build *.egg-info .pytest_cache .mypy_cache .ruff_cache
