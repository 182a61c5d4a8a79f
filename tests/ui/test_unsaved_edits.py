"""Unsaved edits are never lost or misapplied: outside changes, cancel, merge, undo, purge."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QApplication

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.ui.dialogs.merge_dialog import default_content, survivor_of
from memgui.ui.views.trace_editor import format_ttl, parse_ttl
from tests.support.waiting import WAIT_MS
from tests.support.window import Answers, open_window, select_row, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


class Recorded(Answers):
    """Answers that note each question, in order, and merge the texts as the dialog would."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[object] = []

    def unsaved_edit(self) -> str:
        self.asked.append("unsaved")
        return self.unsaved

    def tag(self, _title: str, _choices) -> str:
        self.asked.append("tag")
        return self.tag_text

    def merge(self, traces) -> tuple[str, str]:
        self.asked.append(("merge", [t.content for t in traces]))
        return survivor_of(traces).id, default_content(traces)

    def link_target(self, _brain, _exclude):
        self.asked.append("link")
        return self.link


@pytest.fixture
def window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path)
    opened.edits.ask = Recorded()
    yield opened
    opened.edits.ask.unsaved = "discard"
    opened.close()


@pytest.fixture
def live_window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path, live=True)
    opened.edits.ask = Recorded()
    yield opened
    opened.edits.ask.unsaved = "discard"
    opened.close()


def _type_at_end(qtbot, window, text: str) -> str:
    """Type `text` at the end of the shown memory's content; the text the editor then holds."""
    content = window.detail.editor.content
    content.setFocus()
    qtbot.keyClick(content, Qt.Key.Key_End, CTRL)
    qtbot.keyClicks(content, text)
    return content.toPlainText()


def _click_row(qtbot, window, row: int) -> None:
    index = window.model.index(row, 0)
    window.table.scrollTo(index)
    rect = window.table.visualRect(index)
    qtbot.mouseClick(window.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


# --- 1. another process purges the memory being edited -----------------------------------


def _purge_elsewhere(qtbot, window, brain_path, trace_id: str) -> None:
    with Brain.open(brain_path, actor="cli") as other:
        other.purge(trace_id)
    qtbot.waitUntil(lambda: window.detail.editor.banner.isVisible(), timeout=WAIT_MS)


def test_an_edit_of_a_memory_purged_elsewhere_stays_and_saves_as_a_new_one(
    qtbot, live_window, brain_path
):
    window = live_window
    editor = window.detail.editor
    trace_id = select_row(window, 2)
    before = window.detail.trace
    typed = _type_at_end(qtbot, window, " -- my careful unsaved paragraph")
    _purge_elsewhere(qtbot, window, brain_path, trace_id)
    assert editor.content.toPlainText() == typed and editor.dirty and editor.is_gone
    assert "removed from the brain (by cli)" in editor.banner.text()
    assert editor.save_new_button.isVisible() and editor.discard_button.isVisible()
    assert editor.isEnabled() and editor.revert_button.isEnabled()
    editor.save_new_button.click()
    (saved,) = [t for t in window.session.brain.list_traces(TraceFilter()) if t.content == typed]
    assert saved.id != trace_id
    assert (saved.tags, saved.scope_id, saved.type) == (before.tags, before.scope_id, before.type)
    assert not editor.dirty and not editor.banner.isVisible() and editor.trace.id == saved.id
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.current_id() == saved.id, timeout=WAIT_MS)


def test_an_edit_of_a_memory_purged_elsewhere_can_be_discarded(qtbot, live_window, brain_path):
    window = live_window
    editor = window.detail.editor
    trace_id = select_row(window, 2)
    _type_at_end(qtbot, window, " -- not wanted after all")
    _purge_elsewhere(qtbot, window, brain_path, trace_id)
    count = len(window.session.brain.list_traces(TraceFilter()))
    editor.discard_button.click()
    assert not editor.dirty and editor.trace is None and editor.content.toPlainText() == ""
    assert not editor.banner.isVisible() and not editor.is_gone
    assert len(window.session.brain.list_traces(TraceFilter())) == count  # nothing was written


def test_a_memory_purged_elsewhere_with_nothing_typed_just_goes(qtbot, live_window, brain_path):
    window = live_window
    trace_id = select_row(window, 2)
    with Brain.open(brain_path, actor="cli") as other:
        other.purge(trace_id)
    qtbot.waitUntil(lambda: window.detail.trace is None, timeout=WAIT_MS)
    assert not window.detail.editor.banner.isVisible() and not window.detail.editor.dirty


# --- 2. Cancel on "Unsaved edit" keeps the table on the edited memory ---------------------


def test_cancel_puts_the_table_back_on_the_edited_memory(qtbot, window):
    editor = window.detail.editor
    _click_row(qtbot, window, 0)
    edited = window.model.id_at(0)
    other = window.model.id_at(2)
    typed = _type_at_end(qtbot, window, " EDITED")
    window.edits.ask.unsaved = "cancel"
    _click_row(qtbot, window, 2)
    assert window.edits.ask.asked == ["unsaved"]
    qtbot.waitUntil(lambda: window.current_id() == edited, timeout=WAIT_MS)
    assert window.selected_ids() == [edited]
    assert editor.trace.id == edited and editor.content.toPlainText() == typed
    # The selection actions now act on the memory in the editor, not on the clicked one.
    window.edits.ask.tag_text = "which-one"
    window.window_actions.add_tag.trigger()
    tagged = window.session.brain.get_many([edited, other])
    assert "which-one" in tagged[edited].tags and "which-one" not in tagged[other].tags
    # Clicking the other row again asks again (the current row really changes).
    window.edits.ask.asked.clear()
    window.edits.ask.unsaved = "discard"
    _click_row(qtbot, window, 2)
    assert window.edits.ask.asked == ["unsaved"] and editor.trace.id == other


def test_cancel_with_the_arrow_keys_stays_too(qtbot, window):
    edited = select_row(window, 1)
    _type_at_end(qtbot, window, " EDITED")
    window.edits.ask.unsaved = "cancel"
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Down)
    qtbot.waitUntil(lambda: window.current_id() == edited, timeout=WAIT_MS)
    assert window.selected_ids() == [edited] and window.detail.editor.dirty


# --- 3. Merge settles an unsaved edit first ----------------------------------------------


def test_merge_settles_the_unsaved_edit_before_it_merges(qtbot, window):
    editor = window.detail.editor
    first = select_row(window, 0)
    typed = _type_at_end(qtbot, window, " + UNSAVED")
    selection = window.table.selectionModel()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    selection.select(window.model.index(1, 0), flags)
    window.edits.ask.unsaved = "cancel"
    window.window_actions.merge.trigger()
    assert window.edits.ask.asked == ["unsaved"] and window.session.undo_stack.count() == 0
    window.edits.ask.asked.clear()
    window.edits.ask.unsaved = "save"
    window.window_actions.merge.trigger()
    asked = window.edits.ask.asked
    assert asked[0] == "unsaved" and asked[1][0] == "merge" and len(asked) == 2
    assert typed in asked[1][1]  # the merge started from the saved edit
    wait_idle(qtbot, window)
    merged = [t for t in window.session.brain.list_traces(TraceFilter()) if typed in t.content]
    assert len(merged) == 1
    qtbot.waitUntil(lambda: window.current_id() == merged[0].id, timeout=WAIT_MS)
    assert editor.stack.currentWidget() is editor.form_page and not editor.dirty
    assert first in (merged[0].id, *[t.id for t in window.session.brain.list_traces(TraceFilter())])


# --- 4. Revert after an outside change shows the stored version ---------------------------


def _typed_then_changed_elsewhere(qtbot, window, brain_path) -> tuple[str, Any]:
    """An unsaved edit of row 2, then another process's change of it, flagged in the editor."""
    trace_id = select_row(window, 2)
    _type_at_end(qtbot, window, " (mine)")
    with Brain.open(brain_path, actor="cli") as other:
        stored = other.get(trace_id)
        theirs = other.update(trace_id, {"content": "Theirs"}, expect_version=stored.version)
    qtbot.waitUntil(lambda: window.detail.editor.banner.isVisible(), timeout=WAIT_MS)
    return trace_id, theirs


def test_revert_after_an_outside_change_loads_the_current_version(qtbot, live_window, brain_path):
    window = live_window
    editor = window.detail.editor
    trace_id, theirs = _typed_then_changed_elsewhere(qtbot, window, brain_path)
    editor.revert_button.click()
    assert editor.content.toPlainText() == "Theirs" and editor.trace.version == theirs.version
    assert not editor.dirty and not editor.banner.isVisible()
    _type_at_end(qtbot, window, "!")
    window.window_actions.save.trigger()
    assert editor.stack.currentWidget() is editor.form_page  # no conflict with a stale base
    assert window.session.brain.get(trace_id).content == "Theirs!"


def test_discarding_on_switch_after_an_outside_change_keeps_no_stale_base(
    qtbot, live_window, brain_path
):
    window = live_window
    editor = window.detail.editor
    _typed_then_changed_elsewhere(qtbot, window, brain_path)
    window.edits.ask.unsaved = "discard"
    assert window.edits.settle_unsaved_edit()
    assert editor.content.toPlainText() == "Theirs" and not editor.banner.isVisible()


# --- 6. Alt+N, Alt+G and Alt+X focus their fields -----------------------------------------


@pytest.mark.parametrize(
    ("key", "field"),
    [(Qt.Key.Key_N, "content"), (Qt.Key.Key_G, "tags"), (Qt.Key.Key_X, "ttl_edit")],
)
def test_editor_alt_letters_focus_their_fields(qtbot, window, key, field):
    select_row(window, 0)
    window.detail.setCurrentIndex(0)
    window.table.setFocus()
    qtbot.keyClick(window.table, key, ALT)
    editor = window.detail.editor
    wanted = editor.tags.field if field == "tags" else getattr(editor, field)
    assert QApplication.focusWidget() is wanted


# --- 7. the window's own Undo while typing in the same memory -----------------------------


def test_own_undo_while_typing_is_taken_in_without_a_conflict(qtbot, window):
    editor = window.detail.editor
    trace_id = select_row(window, 0)
    tags = window.detail.trace.tags
    editor.tags.add_tag("newtag")
    window.window_actions.save.trigger()
    assert window.session.brain.get(trace_id).tags == (*tags, "newtag")
    typed = _type_at_end(qtbot, window, " typing, not saved")
    window.window_actions.undo.trigger()
    assert window.session.brain.get(trace_id).tags == tags
    assert editor.tags.tags() == list(tags)  # the undone tag leaves the editor too
    assert editor.content.toPlainText() == typed and editor.dirty  # the typing stays
    assert not editor.banner.isVisible()  # not announced as someone else's change
    window.window_actions.save.trigger()
    assert editor.stack.currentWidget() is editor.form_page and not editor.dirty
    saved = window.session.brain.get(trace_id)
    assert (saved.content, saved.tags) == (typed, tags)


# --- 10. a TTL under ten minutes reads back in its unit -----------------------------------


def test_a_short_ttl_reads_back_in_its_unit():
    now = 1_767_225_600_000
    for text in ("5m", "10m", "90", "1m", "45s"):
        expires_at = now + parse_ttl(text) * 1000
        for later_ms in (0, 1, 120, 999):  # read back a moment after the save
            shown = format_ttl(expires_at, now + later_ms)
            assert parse_ttl(shown) == parse_ttl(text), (text, later_ms, shown)
    assert format_ttl(now + 300_000, now + 50) == "5m"
    assert format_ttl(now + 90_000, now + 50) == "90"


def test_a_five_minute_ttl_saved_in_the_editor_reads_back_as_5m(qtbot, window):
    editor = window.detail.editor
    select_row(window, 0)
    editor.ttl_edit.setText("5m")
    window.window_actions.save.trigger()
    assert not editor.dirty and editor.ttl_edit.text() == "5m"


# --- 11. Ctrl+L follows the Links tab for a memory in the trash ---------------------------


def test_link_action_is_off_for_a_memory_in_the_trash(qtbot, window):
    trace_id = select_row(window, 2)
    target = window.model.id_at(3)
    assert window.window_actions.add_link.isEnabled()
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    window.window_actions.trash_view.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 1 and not window.model.busy, timeout=WAIT_MS)
    window.table.selectionModel().clear()  # the restored current row is not shown: pick it
    assert window.select_id(trace_id)
    assert window.detail.trace.deleted
    window.detail.setCurrentWidget(window.detail.links)
    assert not window.detail.links.add_button.isEnabled()
    assert not window.window_actions.add_link.isEnabled()
    window.edits.ask.link = (target, "relates_to")
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_L, CTRL)
    window.edits.add_link()  # the slot itself refuses too
    assert "link" not in window.edits.ask.asked
    assert window.session.brain.related(trace_id) == []


def test_purge_asks_about_an_unsaved_edit_first(qtbot, window):
    trace_id = select_row(window, 0)
    _type_at_end(qtbot, window, " not saved")
    window.edits.ask.unsaved = "cancel"
    window.window_actions.purge.trigger()
    assert window.edits.ask.asked == ["unsaved"] and window.session.brain.get(trace_id)
    assert window.detail.editor.dirty
