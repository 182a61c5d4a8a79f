"""Waiting in a benchmark's Qt event loop for a state, woken by events, never by a sleep."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

TICK_MS = 5  # wakes the loop to look again when a state changes without an event


def wait_until(
    app: QApplication,
    until: Callable[[], bool],
    timeout_s: float,
    what: str = "the app",
    tick_ms: int | None = TICK_MS,
) -> None:
    """Run the event loop until `until()` holds; TimeoutError after `timeout_s`. `tick_ms`
    None: only events wake the loop (a state every change of which comes with an event):
    a tick wakes the GUI thread, which then takes the GIL from the worker being measured
    (at the app's 1 ms switch interval, a 5 ms tick slowed a neighbourhood's query 1.5×)."""
    tick = QTimer()
    if tick_ms is None:
        tick.setSingleShot(True)
        tick.start(int(timeout_s * 1000) + 1)  # wakes the loop once, to time out
    else:
        tick.start(tick_ms)
    deadline = time.perf_counter() + timeout_s
    try:
        while not until():
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{what} did not get there in {timeout_s:g} s")
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    finally:
        tick.stop()
