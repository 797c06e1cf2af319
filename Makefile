# Two entry points that work on a fresh machine with python3, git and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kitty-installed
# Spec Kitty 3.2.7 in a venv of its own: the oracle of the compatibility tests
# (tests/oracle). Test setup only, never a dependency of kitty.
ORACLE := .oracle-venv/.installed

AGENTS := tests/agents
AGENTS_STAMP := $(AGENTS)/node_modules/.kitty-installed

.PHONY: demo test lint bench mutation clean agent-clis

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

# The suite runs on every core (pytest-xdist); SERIAL=1 runs it in one process (-n 0),
# JOBS=N on N workers; PYTEST_ARGS adds options (`PYTEST_ARGS="-p no:randomly"`).
JOBS ?= auto
PYTEST_ARGS ?=
test: $(STAMP) $(ORACLE) lint agent-clis  ## lint, type-check and run the whole suite (SERIAL=1: in one process)
	$(BIN)/python -m pytest -n $(if $(SERIAL),0,$(JOBS)) --durations=25 $(PYTEST_ARGS)

# The real agent CLIs for tests/agents, at the exact versions of its package-lock.json,
# from the npm registry only. `npm install --no-save` rather than `npm ci`: the lock
# cannot list the other platforms' optional binary packages (the registry here lacks
# them) and `npm ci` refuses such a lock. No package script runs; claude and opencode
# then copy their platform binary (an npm optional dependency) in place with their own
# postinstall, which downloads nothing. Without npm the tests skip (in CI with npm, a
# missing CLI fails them).
agent-clis:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(AGENTS_STAMP); \
	else echo "npm not found: tests/agents (the real agent CLIs) will be skipped"; fi

$(AGENTS_STAMP): $(AGENTS)/package.json $(AGENTS)/package-lock.json
	cd $(AGENTS) && npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error
	cd $(AGENTS)/node_modules/@anthropic-ai/claude-code && node install.cjs
	cd $(AGENTS)/node_modules/opencode-ai && node postinstall.mjs
	@touch $@

lint: $(STAMP)
	$(BIN)/ruff check kitty tests benchmarks mutation
	$(BIN)/ruff format --check kitty tests benchmarks mutation
	$(BIN)/mypy

mutation: $(STAMP)  ## mutation score of the pure rules (kitty/core, every rules/ package), the write path, security, team and cache code (hours; MODULES=word picks some, minutes each)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,mutation]'
	nice -n 15 $(BIN)/python mutation/run.py $(MODULES)

bench: $(STAMP)  ## median wall and CPU times of an installed (non-editable) kitty
	rm -rf .bench-venv && $(PYTHON) -m venv .bench-venv
	.bench-venv/bin/python -m pip install --quiet --disable-pip-version-check .
	$(BIN)/python benchmarks/bench.py --kitty .bench-venv/bin/kitty
	$(BIN)/python benchmarks/remote_claims.py --kitty .bench-venv/bin/kitty
	$(BIN)/python benchmarks/schedule.py

clean:
	rm -rf $(VENV) .oracle-venv .bench-venv .mutation build *.egg-info .pytest_cache .mypy_cache .ruff_cache
	rm -rf $(AGENTS)/node_modules
