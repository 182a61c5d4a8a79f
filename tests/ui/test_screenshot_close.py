"""The offscreen window of `memgui screenshot` closes without asking, whatever still ran."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from memgui.core.progress import Progress
from memgui.ui.screenshot import offscreen_window


def _slow_import():
    for n in range(500):
        time.sleep(0.01)
        yield Progress(n, 500, "working")


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
            window.runner.start("import", _slow_import)
    finally:
        timer.stop()
    assert asked == []
