"""Keys that did something else than the person meant: Ctrl+Z in the empty tag field, and
the keyboard in the Trash."""

from __future__ import annotations

from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_z_in_the_empty_tag_field_undoes_the_save(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    trace_id = select_row(window, 0)
    editor = window.detail.editor
    before = list(editor.trace.tags)
    field = editor.tags.field
    field.setFocus()
    qtbot.keyClicks(field, "alpha")
    qtbot.keyClick(field, Qt.Key.Key_Return)  # a chip now; the field is empty again
    qtbot.keyClick(field, Qt.Key.Key_S, CTRL)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not editor.dirty and "alpha" in editor.trace.tags, timeout=WAIT_MS)
    assert field.text() == ""
    qtbot.keyClick(field, Qt.Key.Key_Z, CTRL)
    wait_idle(qtbot, window)
    assert field.text() == ""  # the typed text does not come back…
    with Brain.open(brain_path) as brain:
        assert list(brain.get(trace_id).tags) == before  # …the save is undone
    qtbot.keyClick(field, Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    with Brain.open(brain_path) as brain:
        assert "alpha" in brain.get(trace_id).tags
    qtbot.keyClicks(field, "beta")
    qtbot.keyClick(field, Qt.Key.Key_Z, CTRL)  # while typing, Ctrl+Z stays in the text
    assert field.text() == ""
    with Brain.open(brain_path) as brain:
        assert "alpha" in brain.get(trace_id).tags
    window.close()


def test_in_the_trash_the_keyboard_selects_the_row_it_reaches_and_restores_it(
    qtbot, tmp_path, brain_path
):
    window = open_window(qtbot, tmp_path, brain_path)
    for _ in range(2):
        select_row(window, 0)
        window.window_actions.delete.trigger()
        wait_idle(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_D, CTRL | Qt.KeyboardModifier.ShiftModifier)  # the Trash
    wait_idle(qtbot, window)
    assert window.model.rowCount() == 2 and window.selected_ids() == []
    first = window.model.id_at(0)
    window.filter_bar.trash_check.setFocus()
    qtbot.keyClick(window.filter_bar.trash_check, Qt.Key.Key_Tab)  # on to the table
    assert window.table.hasFocus()
    assert window.selected_ids() == [first]  # the row the focus shows is the one chosen
    qtbot.keyClick(window.table, Qt.Key.Key_Home)
    assert window.selected_ids() == [first]
    assert window.window_actions.restore.isEnabled()
    qtbot.keyClick(window.table, Qt.Key.Key_R, CTRL | Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, window)
    with Brain.open(brain_path) as brain:
        assert not brain.get(first).deleted
    window.close()
