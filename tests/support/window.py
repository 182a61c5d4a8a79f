"""A main window opened on a brain file as a person would, and waiting for it to settle."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from memgui.ui.dialogs.merge_dialog import survivor_of
from memgui.ui.main_window import MainWindow
from tests.support.waiting import WAIT_MS


class Answers:
    """Fixed answers to the questions the window's edits ask."""

    def __init__(self) -> None:
        self.purge = True
        self.tag_text = "reviewed"
        self.merged = "Merged by hand"
        self.keep: str | None = None  # the memory a merge keeps (None: the default)
        self.unsaved = "discard"
        self.link: tuple[str, str] | None = None
        self.migrate = True
        self.migrations_asked: list = []

    def unsaved_edit(self) -> str:
        return self.unsaved

    def confirm_purge(self, _count: int) -> bool:
        return self.purge

    def tag(self, _title: str, _choices) -> str:
        return self.tag_text

    def merge(self, traces) -> tuple[str, str]:
        return self.keep or survivor_of(traces).id, self.merged

    def link_target(self, _brain, _exclude) -> tuple[str, str] | None:
        return self.link

    def migration(self, plan) -> bool:
        self.migrations_asked.append(plan)
        return self.migrate


def open_window(qtbot, tmp_path, brain_path, live: bool = False, **settings_values) -> MainWindow:
    """A shown window on `brain_path`, its question dialogs answered by `Answers`."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    for key, value in settings_values.items():
        settings.setValue(key, value)
    window = MainWindow(settings=settings, live=live)
    qtbot.addWidget(window)
    window.edits.ask = Answers()
    assert window.files.open_path(brain_path)
    window.show()
    qtbot.waitExposed(window, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    return window


def wait_idle(qtbot, window: MainWindow) -> None:
    """Wait for the table's query and the status bar's counts."""
    qtbot.waitUntil(
        lambda: (
            window.model is not None
            and not window.model.busy
            and not [j for j in window.query_runner.active_jobs if j.name == "counts"]
        ),
        timeout=WAIT_MS,
    )


def select_row(window: MainWindow, row: int) -> str:
    trace_id = window.model.id_at(row)
    assert window.select_id(trace_id)
    return trace_id
