# Two commands for a new user: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint format bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/memgui

test: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check memgui tests
	$(BIN)/ruff format --check memgui tests
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check memgui tests
	$(BIN)/ruff format --check memgui tests

format: $(STAMP)
	$(BIN)/ruff format memgui tests
	$(BIN)/ruff check --fix memgui tests

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.bench.run_all

clean:
	rm -rf $(VENV) .npm-cache build *.egg-info
