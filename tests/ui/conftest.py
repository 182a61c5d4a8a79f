"""Fixtures of the app tests: a real brain file in tmp_path, a session over it, and a window
with import and export installed over it (`window`; a module may define its own)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402

from memgui.core.brain import Brain  # noqa: E402
from memgui.ui.session import BrainSession  # noqa: E402
from tests.support.brains import fill  # noqa: E402
from tests.support.import_export import WAIT_MS  # noqa: E402


@pytest.fixture
def brain_path(tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        fill(brain)
    return path


@pytest.fixture
def session(brain_path, qapp):
    opened = BrainSession.open(brain_path)
    yield opened
    opened.close()


@pytest.fixture
def window(qtbot, brain_path, tmp_path):
    from memgui.ui.main_window import MainWindow

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    main = MainWindow(settings=settings, live=False)
    qtbot.addWidget(main)
    main.set_session(BrainSession.open(brain_path))
    main.resize(1000, 700)
    main.show()
    qtbot.waitUntil(lambda: main.model is not None and not main.model.busy, timeout=WAIT_MS)
    yield main
    main.runner.shutdown()
