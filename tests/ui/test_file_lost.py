"""The open brain's file deleted, replaced or damaged by another program: the window says
so, turns read-only and keeps the unsaved edit; nothing is written anywhere."""

from __future__ import annotations

import os

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import BrainFileLost
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row


@pytest.fixture
def window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path, live=True)
    yield opened
    opened.close()


def _edit_unsaved(window) -> str:
    select_row(window, 0)
    window.detail.editor.content.setPlainText("words typed but not saved")
    assert window.detail.editor.dirty
    return window.current_id()


def _assert_lost(qtbot, window, why: str) -> None:
    qtbot.waitUntil(lambda: window.read_only_label.text() == "File lost", timeout=WAIT_MS)
    assert window.read_only_label.isVisible() and why in window.read_only_label.toolTip()
    assert "(read-only)" in window.windowTitle()
    assert (
        not window.window_actions.save.isEnabled()
        and not window.window_actions.new_memory.isEnabled()
    )
    editor = window.detail.editor
    assert editor.content.toPlainText() == "words typed but not saved"  # kept, to copy out
    assert editor.content.isReadOnly()


def test_a_deleted_file_is_reported_and_never_made_again(qtbot, window, brain_path):
    trace_id = _edit_unsaved(window)
    os.unlink(brain_path)
    _assert_lost(qtbot, window, "was deleted or moved")
    window.model.refresh()  # a reader of the lost file must not make an empty brain there
    qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)
    with pytest.raises(BrainFileLost, match="deleted or moved"):
        window.session.brain.update(trace_id, {"content": "late"})
    assert not brain_path.exists()


def test_a_file_replaced_by_another_is_reported_and_left_alone(qtbot, window, brain_path, tmp_path):
    _edit_unsaved(window)
    other = tmp_path / "other.sqlite"
    with Brain.open(other, "brain", actor="test") as brain:
        brain.add("the other file's only memory")
    before = other.read_bytes()
    os.replace(other, brain_path)
    _assert_lost(qtbot, window, "was replaced by another file")
    window.close()
    assert brain_path.read_bytes() == before


def test_a_file_damaged_in_place_fails_the_save_with_a_message(qtbot, window, brain_path):
    trace_id = _edit_unsaved(window)
    window.session.brain.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = brain_path.stat().st_size
    with open(brain_path, "r+b") as damaged:
        damaged.write(os.urandom(size))
    window.session.brain.db.conn.cache_flush()
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)
    window.window_actions.save.trigger()
    _assert_lost(qtbot, window, "is damaged")
    assert any("damaged" in message for message in messages)
    with pytest.raises(BrainFileLost):
        window.session.brain.update(trace_id, {"content": "late"})
