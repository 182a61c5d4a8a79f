"""The build's own modules (packaging/ is scripts, not a package: `packaging` is also a
PyPI name), loaded by path for the tests of the build's inputs."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.paths import PACKAGING


def packaging_module(name: str) -> ModuleType:
    """`packaging/<name>.py`, loaded once."""
    key = f"memgui_build_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, PACKAGING / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
