# Two commands for a new user: `make run` and `make test`. While editing, `make check` (the
# same without the slow tests); `pre-commit install` runs lint and types before each commit.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

PACKAGE_VENV := build/package/venv
PACKAGE_STAMP := $(PACKAGE_VENV)/.installed
APP := $(firstword $(wildcard dist/memgui/memgui) $(BIN)/memgui)
LINTED := memgui tests resources packaging docs/make_screenshots.py

# Debian packages: appstreamcli, desktop-file-validate and gio check the desktop files; Xvfb
# runs the app in a real X11 window; binutils strips the build; Qt's X11 plugin needs the
# xcb and GL libraries (the build bundles the xcb ones from here).
SYSTEM_PACKAGES := appstream desktop-file-utils libglib2.0-bin shared-mime-info xvfb binutils \
	libegl1 libgl1 libfontconfig1 libdbus-1-3 libxkbcommon-x11-0 libxcb-cursor0 \
	libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 \
	libxcb-shape0 libxcb-xkb1

.PHONY: run test check lint types format bench bench-agentos resources clean package package-test \
	install-desktop screenshots system-packages compiler

# The install compiles memgui_bm25, keyword search's ranking function in C (setup.py; without
# a compiler it goes on, and FTS5's bm25 ranks the same, slower): a C compiler first.
BUILT_FROM := pyproject.toml setup.py memgui/core/search/csrc/memgui_bm25.c \
  memgui/core/search/csrc/count_cache.c memgui/core/search/csrc/count_cache.h \
  memgui/core/search/csrc/busy_wait.c

$(STAMP): $(BUILT_FROM)
	@$(MAKE) --no-print-directory compiler
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# First the libraries Qt's X11 plugin needs (installed when run as root, else the command
# to run is printed): without them Qt aborts without naming them.
run: $(STAMP)
	$(BIN)/python -m memgui.ui.qt_platform --install
	$(BIN)/memgui

# Everything CI runs: the import contracts, ruff, the format, the type check, every test.
test: lint types
	@$(MAKE) --no-print-directory system-packages REQUIRED=no
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -rs -p no:cacheprovider

# The edit loop: the same checks, the tests not marked slow (processes, npm, the fault
# injection, soak and fuzz suites).
check: lint types
	@$(MAKE) --no-print-directory system-packages REQUIRED=no
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow"

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

# mypy, strict, on the whole package, against tests/support/mypy-baseline.txt (empty).
types: $(STAMP)
	$(BIN)/python -m tests.support.type_baseline

format: $(STAMP)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

# The package's icons and sample data copied from the masters in resources/, and the app icon
# rendered to PNGs (resources/build.py).
resources: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python resources/build.py

# Installs what SYSTEM_PACKAGES lists and is missing: as root with apt-get; otherwise it names
# the one command to run (and, with REQUIRED=no, goes on: the tests that need them skip).
REQUIRED ?= yes
system-packages:
	@command -v dpkg-query >/dev/null || { echo "not a Debian system: install the equivalents of: $(SYSTEM_PACKAGES)"; exit 0; }; \
	missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing $$(echo $$missing)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else \
	  echo "memgui needs these Debian packages: sudo apt-get install $$(echo $$missing)"; \
	  [ "$(REQUIRED)" = no ]; \
	fi

# A C compiler (and the C library's headers) for memgui_bm25: installed as root with apt-get
# when missing, else the command to run is named (and the install goes on without it).
COMPILER_PACKAGES := gcc libc6-dev
compiler:
	@if command -v $${CC:-cc} >/dev/null || command -v gcc >/dev/null; then exit 0; fi; \
	if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  echo "installing $(COMPILER_PACKAGES) (memgui_bm25)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(COMPILER_PACKAGES) >/dev/null; \
	else \
	  echo "memgui_bm25 needs a C compiler (Debian: sudo apt-get install $(COMPILER_PACKAGES)); without it keyword search ranks with FTS5's bm25, slower"; \
	fi

# The frozen one-folder build (packaging/README.md): dist/memgui/ and the .tar.gz beside it,
# made in a venv of its own from this tree, then its smoke test. Not part of `make test`.
$(PACKAGE_STAMP): $(BUILT_FROM)
	@$(MAKE) --no-print-directory compiler
	@test -x $(PACKAGE_VENV)/bin/python || $(PYTHON) -m venv $(PACKAGE_VENV)
	$(PACKAGE_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PACKAGE_VENV)/bin/python -m pip install --quiet '.[package]'
	@touch $(PACKAGE_STAMP)

package: $(PACKAGE_STAMP)
	@$(MAKE) --no-print-directory system-packages compiler
	$(PACKAGE_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall .
	$(PACKAGE_VENV)/bin/python packaging/build.py
	@$(MAKE) --no-print-directory package-test

# The smoke test runs the built program, not this tree (packaging/smoke_test.py).
package-test:
	@$(MAKE) --no-print-directory system-packages
	$(PYTHON) packaging/smoke_test.py dist/memgui

# memgui in this user's desktop (menu, icon, opening .sqlite brains): the build when there is
# one, else this tree's venv.
install-desktop: $(STAMP)
	$(APP) install-desktop

# The user guide's screenshots (docs/screenshots/), each made by `memgui screenshot`.
screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python docs/make_screenshots.py

# Every benchmark at the sizes docs/performance.md quotes (hours); BENCH_ARGS=--quick runs
# them small, `--only bench_core bench_ui` picks some (tests/bench/run_all.py).
BENCH_ARGS ?=
bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m tests.bench.run_all $(BENCH_ARGS)

# add, search, update and delete against the real AgentOS tools at 5k and 20k traces, in one
# run, with AgentOS's p50 over memgui's per op (tests/bench/bench_agentos_ops.py: each side's
# ops of a kind in a batch), then the writes again op by op, the two sides in turn
# (tests/bench/bench_agentos_writes.py); minutes.
bench-agentos: $(STAMP)
	$(BIN)/python -m tests.bench.bench_agentos_ops $(AGENTOS_BENCH_ARGS)
	$(BIN)/python -m tests.bench.bench_agentos_writes $(AGENTOS_WRITES_ARGS)

clean:
	rm -rf $(VENV) .npm-cache .import_linter_cache .mypy_cache build dist *.egg-info
