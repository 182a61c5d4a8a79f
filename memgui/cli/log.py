"""Where the `memgui` command logs failures: a file in the user log folder, never the terminal.

The core logs storage failures with their detail (which may hold SQL text); the command shows
only `<operation> failed due to a storage error` and keeps the detail in this file.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

APP_NAME = "memgui"
LOG_FILE_NAME = "memgui.log"


def log_file_path() -> Path:
    import platformdirs

    return Path(platformdirs.user_log_dir(APP_NAME)) / LOG_FILE_NAME


class _LazyFileHandler(logging.FileHandler):
    """Creates the log folder and file when the first record arrives, not before."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)

    def _open(self) -> Any:  # FileHandler's hook, called on the first record
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:
        # An unwritable log folder must not print a traceback over the command's message.
        pass


@contextmanager
def failures_logged_to_file() -> Iterator[Path]:
    """Route warnings and errors of every `memgui.*` logger to the log file meanwhile.

    Having a handler also keeps logging's last-resort handler from printing them to stderr.
    """
    path = log_file_path()
    handler = _LazyFileHandler(path)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger(APP_NAME)
    logger.addHandler(handler)
    try:
        yield path
    finally:
        logger.removeHandler(handler)
        handler.close()
