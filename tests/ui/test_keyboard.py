"""Keyboard-only use of the main window: Esc, Tab order, Alt mnemonics, Ctrl+Z, messages."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QTabBar

from memgui.core.brain import Brain
from memgui.ui.main_window import MainWindow
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def test_esc_in_filter_bar_clears_filters_and_keeps_focus(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    bar = window.filter_bar
    bar.type_box.setCurrentIndex(1)
    bar.tag_edit.setFocus()
    qtbot.keyClicks(bar.tag_edit, "ui")
    qtbot.keyClick(bar.tag_edit, Qt.Key.Key_Escape)
    assert bar.tag_edit.text() == ""
    assert bar.type_box.currentData() is None
    assert QApplication.focusWidget() is bar.tag_edit
    window.close()


def test_esc_in_editor_keeps_focus(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    content = window.detail.editor.content
    content.setFocus()
    qtbot.keyClick(content, Qt.Key.Key_Escape)
    assert QApplication.focusWidget() is content
    window.close()


def test_tab_leaves_table_for_editor(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    for modifier in (Qt.KeyboardModifier.NoModifier, CTRL):
        window.table.setFocus()
        qtbot.keyClick(window.table, Qt.Key.Key_Tab, modifier)
        assert QApplication.focusWidget() is window.detail.editor.content
    window.close()


def test_tab_order_follows_the_screen(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    s, f, e = window.search_bar, window.filter_bar, window.detail.editor
    expected = [s.field, s.mode_box, f.type_box, f.scope_box, f.category_box]
    expected += [f.scope_id_edit, f.tag_edit, f.trash_check, window.table, e.content]
    expected += e.tags.findChildren(QAbstractButton) + [e.tags.field, e.type_box]
    s.field.setFocus()
    seen = [QApplication.focusWidget()]
    for _ in expected[1:]:
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(QApplication.focusWidget())
    assert seen == expected
    window.close()


def _mnemonics(window: MainWindow) -> list[tuple[str, str]]:
    """(letter, caption) of every visible '&x' in the window, menu titles included."""
    captions = [a.text() for a in window.menuBar().actions()]
    for label in window.findChildren(QLabel):
        if label.buddy() is not None and label.isVisible():
            captions.append(label.text())
    for bar in window.findChildren(QTabBar):
        if bar.isVisible():
            captions += [bar.tabText(i) for i in range(bar.count())]
    for button in window.findChildren(QAbstractButton):
        if button.isVisible():
            captions.append(button.text())
    found = []
    for caption in captions:
        match = re.search(r"&([^&])", caption.replace("&&", ""))
        if match:
            found.append((match.group(1).lower(), caption))
    return found


def test_no_two_visible_controls_share_a_mnemonic(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    for index in range(window.detail.count()):
        window.detail.setCurrentIndex(index)
        found = _mnemonics(window)
        letters = [letter for letter, _ in found]
        clashes = {c for letter, c in found if letters.count(letter) > 1}
        assert not clashes, f"tab {index}: {sorted(clashes)}"
    captions = {c.replace("&", "") for _, c in _mnemonics(window)}
    window.detail.setCurrentIndex(0)
    captions |= {c.replace("&", "") for _, c in _mnemonics(window)}
    assert {"Content", "Tags"} <= captions
    # The conflict view takes the editor's place: its buttons too have letters of their own.
    window.detail.editor.show_conflict(window.detail.editor.trace, "agent")
    found = _mnemonics(window)
    letters = [letter for letter, _ in found]
    assert not {c for letter, c in found if letters.count(letter) > 1}
    assert {"Keep mine", "Take theirs", "Edit again"} <= {c.replace("&", "") for _, c in found}
    window.close()


def _type_at_end(qtbot, window, text: str):
    """Type `text` at the end of the first memory's content; its editor and text before."""
    editor = window.detail.editor
    before = editor.trace.content
    editor.content.setFocus()
    qtbot.keyClick(editor.content, Qt.Key.Key_End, CTRL)
    qtbot.keyClicks(editor.content, text)
    return editor, before


def test_ctrl_z_in_content_after_save_undoes_the_save(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    trace_id = select_row(window, 0)
    editor, before = _type_at_end(qtbot, window, " edited")
    qtbot.keyClick(editor.content, Qt.Key.Key_S, CTRL)
    wait_idle(qtbot, window)
    qtbot.waitUntil(
        lambda: not editor.dirty and editor.trace.content == before + " edited", timeout=WAIT_MS
    )
    assert QApplication.focusWidget() is editor.content
    qtbot.keyClick(editor.content, Qt.Key.Key_Z, CTRL)
    wait_idle(qtbot, window)
    with Brain.open(brain_path) as brain:
        assert brain.get(trace_id).content == before
    qtbot.keyClick(editor.content, Qt.Key.Key_Z, CTRL | Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, window)
    with Brain.open(brain_path) as brain:
        assert brain.get(trace_id).content == before + " edited"
    window.close()


def test_ctrl_z_while_typing_stays_in_the_text(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    editor, before = _type_at_end(qtbot, window, "x")
    qtbot.keyClick(editor.content, Qt.Key.Key_Z, CTRL)
    assert editor.content.toPlainText() == before
    assert not window.undo_group.canUndo()
    window.close()


def test_neighbours_tab_says_when_there_are_none(qtbot, tmp_path, brain_path) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    select_row(window, 0)
    tab = window.detail.neighbours
    window.detail.setCurrentWidget(tab)
    assert tab.model.rowCount() == 0
    assert tab.message.isVisible()
    assert "No knowledge-graph nodes" in tab.message.text()
    window.close()


def test_a_ttl_reads_back_in_the_unit_it_was_given():
    from memgui.ui.views.trace_editor import format_ttl, parse_ttl

    now = 1_767_225_600_000
    for text, later_ms in (("7d", 1500), ("12h", 30_000), ("2w", 999), ("90", 0), ("30m", 0)):
        expires_at = now + parse_ttl(text) * 1000
        shown = format_ttl(expires_at, now + later_ms)  # read back a moment after the save
        assert parse_ttl(shown) == parse_ttl(text), (text, shown)
