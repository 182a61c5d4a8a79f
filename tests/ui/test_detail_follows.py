"""The detail pane follows the table when a new list comes (the Trash, a filter)."""

from __future__ import annotations

from tests.support.window import open_window, select_row, wait_idle


def test_switching_to_the_trash_leaves_no_live_memory_in_the_editor(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 1)
    window.edits.set_deleted(True)
    wait_idle(qtbot, window)
    shown = window.detail.trace
    assert shown is not None and not shown.deleted  # the next memory, after the delete
    window.filter_bar.trash_check.setChecked(True)
    wait_idle(qtbot, window)
    current = window.current_id()
    trace = window.detail.trace
    assert (trace.id if trace else None) == current
    assert trace is None or trace.deleted


def test_an_unsaved_edit_stays_when_the_list_changes(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    edited = select_row(window, 0)
    window.detail.editor.content.setPlainText("my unsaved words")
    window.filter_bar.trash_check.setChecked(True)
    wait_idle(qtbot, window)
    assert window.detail.trace is not None and window.detail.trace.id == edited
    assert window.detail.editor.content.toPlainText() == "my unsaved words"
