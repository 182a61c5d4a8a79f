"""Waiting in a benchmark's Qt event loop for a state, woken by events, never by a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

TICK_MS = 5  # wakes the loop to look again when a state changes without an event


def wait_until(
    app: QApplication, until: Callable[[], bool], timeout_s: float, what: str = "the app"
) -> None:
    """Run the event loop until `until()` holds; TimeoutError after `timeout_s`."""
    tick = QTimer()
    tick.start(TICK_MS)
    deadline = time.perf_counter() + timeout_s
    try:
        while not until():
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{what} did not get there in {timeout_s:g} s")
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    finally:
        tick.stop()
