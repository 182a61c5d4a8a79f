# Two commands for a new user: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench resources clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# First the libraries Qt's X11 plugin needs (installed when run as root, else the command
# to run is printed): without them Qt aborts without naming them.
run: $(STAMP)
	$(BIN)/python -m memgui.ui.qt_platform --install
	$(BIN)/memgui

test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check memgui tests resources
	$(BIN)/ruff format --check memgui tests resources
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check memgui tests resources
	$(BIN)/ruff format --check memgui tests resources

format: $(STAMP)
	$(BIN)/ruff format memgui tests resources
	$(BIN)/ruff check --fix memgui tests resources

# The package's icons and sample data copied from the masters in resources/, and the app icon
# rendered to PNGs (resources/build.py).
resources: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python resources/build.py

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.bench.run_all

clean:
	rm -rf $(VENV) .npm-cache .import_linter_cache build *.egg-info
