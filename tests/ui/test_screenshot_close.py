"""The offscreen window of `memgui screenshot` closes without asking, whatever still ran."""

from __future__ import annotations

import threading

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from memgui.core.progress import Progress
from memgui.ui.screenshot import offscreen_window


def _import_until_cancelled():
    never = threading.Event()  # it never ends by itself: the window's close cancels it
    while not never.wait(0.01):  # a step every 10 ms
        yield Progress(0, None, "working")


def test_closing_with_a_job_running_asks_nothing(qapp, brain_path) -> None:
    asked: list[str] = []

    def dismiss() -> None:  # a question nobody can answer offscreen would hang the run
        box = QApplication.activeModalWidget()
        if box is not None:
            asked.append(box.windowTitle())
            box.close()

    timer = QTimer()
    timer.timeout.connect(dismiss)
    timer.start(50)
    try:
        with offscreen_window(brain_path) as (_app, window):
            window.runner.start("import", _import_until_cancelled)
    finally:
        timer.stop()
    assert asked == []
