"""The window starts without the import and export engines: they load when something is
imported or exported (a quarter of the app's start-up CPU otherwise, docs/performance.md)."""

from __future__ import annotations

import subprocess
import sys

ENGINES = (
    "memgui.core.io.readers",
    "memgui.core.io.planning",
    "memgui.core.io.writing",
    "memgui.core.io.exporters",
    "memgui.ui.importing.import_dialog",
    "memgui.ui.exporting.export_dialog",
    "memgui.ui.consolidation.consolidation_dialog",
)


def test_the_app_loads_no_import_or_export_engine() -> None:
    probe = (
        "import sys\n"
        "import memgui.ui.app, memgui.ui.main_window\n"
        f"print(sorted(m for m in {ENGINES!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
