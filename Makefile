# Two commands for a new user: `make run` and `make test`. While editing, `make check` (the
# same without the slow tests); `pre-commit install` runs lint and types before each commit.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint types format bench resources clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/memgui

# Everything CI runs: the import contracts, ruff, the format, the type check, every test.
test: lint types
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs -p no:cacheprovider

# The edit loop: the same checks, the tests not marked slow (processes, npm, the fault
# injection, soak and fuzz suites).
check: lint types
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow"

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check memgui tests resources
	$(BIN)/ruff format --check memgui tests resources

# mypy, strict, on the whole package, against tests/support/mypy-baseline.txt (empty).
types: $(STAMP)
	$(BIN)/python -m tests.support.type_baseline

format: $(STAMP)
	$(BIN)/ruff format memgui tests resources
	$(BIN)/ruff check --fix memgui tests resources

# The package's icons and sample data copied from the masters in resources/, and the app icon
# rendered to PNGs (resources/build.py).
resources: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python resources/build.py

# Every benchmark at the sizes docs/performance.md quotes (hours); BENCH_ARGS=--quick runs
# them small, `--only bench_core bench_ui` picks some (tests/bench/run_all.py).
BENCH_ARGS ?=
bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.bench.run_all $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .npm-cache .import_linter_cache .mypy_cache build *.egg-info
