"""The `memgui` program (and `python -m memgui`): the command line with the app's part.

The command line (`memgui.cli`) knows nothing of the app. The app registers its part with
the command line's registry (`memgui.ui.command_line`: `memgui [BRAIN]` opens the window,
`memgui screenshot` draws it), and this module, above both, loads the two and runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from memgui.cli.main import main as run_command_line
from memgui.ui import command_line  # noqa: F401 - registers the app's commands


def main(argv: Sequence[str] | None = None) -> int:
    """Run `memgui` with `argv` (default: the process's arguments); return the exit code."""
    return run_command_line(argv)


if __name__ == "__main__":
    sys.exit(main())
