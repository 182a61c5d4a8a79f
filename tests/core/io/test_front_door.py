"""`memgui.core.io` is the one module callers import: every name it lists, engines loaded late."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys

import pytest

import memgui.core.io as io
from tests.support.paths import ROOT


@pytest.mark.parametrize("name", io.__all__)
def test_every_listed_name_is_the_one_its_module_defines(name: str) -> None:
    value = getattr(io, name)
    module = io._ENGINES.get(name)
    if module is not None:
        assert value is getattr(importlib.import_module(module), name)
    assert value is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = io.no_such_thing


@pytest.mark.slow  # a real process
def test_importing_it_loads_no_reader_planner_or_exporter() -> None:
    # The command line imports it for the format names; the engines cost ~0.4 s to load.
    probe = (
        "import sys, memgui.core.io\n"
        "print(sorted(m for m in sys.modules if m.startswith('memgui.core.io.')))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert ast.literal_eval(loaded) == [
        "memgui.core.io.detect",
        "memgui.core.io.formats",
        "memgui.core.io.options",
        "memgui.core.io.records",
        "memgui.core.io.source_files",  # detection's bounded, non-blocking read: no engine
    ]
