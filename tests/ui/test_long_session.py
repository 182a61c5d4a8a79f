"""Hours of use: nothing piles up, the layout and recent files are remembered, odd
settings are survived, and every menu entry can be reached from the keyboard."""

from __future__ import annotations

import gc
import weakref

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QSettings

from memgui.core.brain import Brain
from memgui.ui.jobs import Job
from memgui.ui.main_window import MainWindow
from memgui.ui.session import BrainSession
from memgui.ui.window.brain_files import RECENT_KEY
from tests.support.brains import fill
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, wait_idle


def _collect() -> None:
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


@pytest.fixture
def other(tmp_path):
    """A second brain of the sample memories, to switch to."""
    path = tmp_path / "other.sqlite"
    with Brain.open(path, actor="test") as brain:
        fill(brain)
    return path


def test_finished_jobs_and_closed_brains_are_let_go(qtbot, tmp_path, brain_path, other):
    window = open_window(qtbot, tmp_path, brain_path)
    finished = weakref.ref(window.runner.start("quick", lambda: iter(())))
    qtbot.waitUntil(lambda: not window.runner.active_jobs, timeout=WAIT_MS)

    def released() -> bool:  # once the pool's worker let go of it too
        _collect()
        return finished() is None

    qtbot.waitUntil(released, timeout=WAIT_MS)
    sessions, jobs = _alive(BrainSession), _alive(Job)  # other tests' may wait for collection
    for n in range(6):
        assert window.files.open_path(other if n % 2 == 0 else brain_path)
        wait_idle(qtbot, window)

    def let_go() -> bool:  # once the last brain's background jobs ended and were collected
        _collect()
        return _alive(BrainSession) <= sessions and _alive(Job) <= jobs

    qtbot.waitUntil(let_go, timeout=WAIT_MS)
    window.close()


def test_column_widths_carry_from_one_brain_to_the_next(qtbot, tmp_path, brain_path, other):
    window = open_window(qtbot, tmp_path, brain_path)
    header = window.table.horizontalHeader()
    header.resizeSection(0, 512)
    header.moveSection(header.visualIndex(3), 1)
    moved = header.logicalIndex(1)
    assert window.files.open_path(other)
    wait_idle(qtbot, window)
    assert header.sectionSize(0) == 512 and header.logicalIndex(1) == moved
    window.close()


def test_window_size_and_split_are_remembered(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    window.resize(760, 560)  # within the offscreen screen (800×600), which restoring keeps to
    window.splitter.setSizes([400, 600])
    sizes = window.splitter.sizes()
    window.close()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    again = MainWindow(settings=settings, live=False)
    qtbot.addWidget(again)
    again.show()
    assert again.files.open_path(brain_path)
    wait_idle(qtbot, again)
    assert (again.width(), again.height()) == (760, 560)
    assert again.splitter.sizes() == sizes
    again.close()


def test_recent_files_of_the_wrong_type_are_ignored(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    for odd in (7, True, "true", {"a": 1}, [3, "", None, "relative.sqlite"]):
        window.settings.setValue(RECENT_KEY, odd)
        assert window.files.recent() == []
        window.files._fill_recent_menu()
    window.close()


def test_a_recent_file_that_went_is_not_made_again(qtbot, tmp_path, brain_path, other):
    gone = other
    window = open_window(qtbot, tmp_path, brain_path)
    assert window.files.open_path(gone)
    assert window.files.open_path(brain_path)
    gone.unlink()
    assert not window.files.open_recent(str(gone))
    assert not gone.exists()
    assert str(gone) not in window.files.recent()
    assert "does not exist any more" in window.statusBar().currentMessage()
    window.close()


def test_every_menu_entry_has_its_own_alt_letter_and_quit_a_key(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    assert not window.window_actions.quit.shortcut().isEmpty()
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        menu.aboutToShow.emit()
        texts = [a.text() for a in menu.actions() if not a.isSeparator()]
        letters = [t[t.index("&") + 1].lower() for t in texts if "&" in t]
        assert len(letters) == len(set(letters)), (menu.title(), texts)
    window.close()
