"""The main window on a real brain: opening, searching, editing, keyboard paths."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from memgui.core.brain import Brain
from memgui.core.errors import NotFound
from memgui.core.model import TraceFilter
from memgui.ui.main_window import MainWindow
from tests.support.waiting import WAIT_MS, WAIT_S
from tests.support.window import open_window, select_row, wait_idle


@pytest.fixture
def window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path)
    yield opened
    opened.close()


def test_opens_with_rows_title_and_counts(window):
    assert window.model.rowCount() == 5
    assert window.windowTitle().startswith("brain.sqlite [brain]")
    assert window.counts_label.text() == "5 memories · 0 in trash"
    assert window.pages.currentWidget() is window.splitter
    assert window.files.recent()[0].endswith("brain.sqlite")


def test_empty_brain_shows_welcome_then_new_memory_by_keyboard(qtbot, tmp_path):
    empty = tmp_path / "empty.sqlite"
    Brain.open(empty).close()
    window = open_window(qtbot, tmp_path, empty)
    assert window.pages.currentWidget() is window.welcome
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    editor = window.detail.editor
    assert editor.is_new and window.pages.currentWidget() is window.splitter
    qtbot.keyClicks(editor.content, "First memory, typed by hand")
    editor.tags.field.setFocus()
    qtbot.keyClicks(editor.tags.field, "manual,")
    qtbot.keyClick(window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window)
    with Brain.open(empty) as brain:
        (trace,) = brain.list_traces(TraceFilter())
    assert (trace.content, trace.tags) == ("First memory, typed by hand", ("manual",))
    qtbot.waitUntil(lambda: window.current_id() == trace.id, timeout=WAIT_MS)
    assert window.pages.currentWidget() is window.splitter
    window.close()


def test_ctrl_f_search_counts_and_does_not_recall(qtbot, window):
    window.table.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.search_bar.field
    qtbot.keyClicks(window.search_bar.field, "invoice")
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert window.search_bar.status_label.text() == "1 result · keyword"
    assert window.table.highlight_delegate.terms == ["invoice"]
    assert window.session.brain.get(window.model.id_at(0)).retrieval_count == 0
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Escape)
    assert QApplication.focusWidget() is window.table


def test_query_error_shows_under_the_field_never_a_dialog(qtbot, window):
    window.model.set_filter(TraceFilter(type="nonsense"))
    qtbot.waitUntil(lambda: window.search_bar.error_label.isVisible(), timeout=WAIT_MS)
    assert "type" in window.search_bar.error_label.text()
    assert QApplication.activeModalWidget() is None


def test_filter_bar_and_trash_view(qtbot, window):
    window.filter_bar.scope_id_edit.setText("u1")
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=WAIT_MS)
    window.filter_bar.scope_id_edit.clear()
    qtbot.waitUntil(lambda: window.model.rowCount() == 5, timeout=WAIT_MS)
    trace_id = select_row(window, 0)
    window.window_actions.delete.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 4, timeout=WAIT_MS)
    window.window_actions.trash_view.trigger()
    qtbot.waitUntil(lambda: window.model.ids() == [trace_id], timeout=WAIT_MS)
    select_row(window, 0)
    window.window_actions.restore.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 0, timeout=WAIT_MS)
    assert not window.session.brain.get(trace_id).deleted


def test_edit_save_and_undo_through_the_window(qtbot, window):
    trace_id = select_row(window, 0)
    before = window.session.brain.get(trace_id)
    editor = window.detail.editor
    editor.content.setPlainText("Rewritten in the editor")
    assert editor.dirty and window.windowTitle().count("•") == 1
    window.window_actions.save.trigger()
    assert window.session.brain.get(trace_id).content == "Rewritten in the editor"
    qtbot.waitUntil(
        lambda: (
            window.model.index(window.model.row_of(trace_id), 0).data() == "Rewritten in the editor"
        ),
        timeout=WAIT_MS,
    )
    window.window_actions.undo.trigger()
    assert window.session.brain.get(trace_id).content == before.content
    qtbot.waitUntil(lambda: editor.content.toPlainText() == before.content, timeout=WAIT_MS)
    window.window_actions.redo.trigger()
    assert window.session.brain.get(trace_id).content == "Rewritten in the editor"


def test_invalid_edit_says_so_inline_in_the_fields_words(window):
    select_row(window, 0)
    editor = window.detail.editor
    editor.content.setPlainText("   ")
    editor.ttl_edit.setText("99999999999")
    assert editor.errors["content"].text() == "Content must not be empty (got '   ')"
    assert editor.errors["ttl_secs"].text() == (
        "Expires in must be between 1 second and 100 years (got 99,999,999,999 seconds)"
    )
    editor.ttl_edit.setText("soon")
    assert editor.errors["ttl_secs"].text().startswith("Expires in must be seconds or a number")
    assert not editor.save_button.isEnabled()
    editor.ttl_edit.setText("7d")
    editor.content.setPlainText("Expires in a week")
    window.window_actions.save.trigger()
    trace = window.session.brain.get(editor.trace.id)
    assert trace.content == "Expires in a week"
    assert 6.9 * 86_400_000 < trace.expires_at - trace.updated_at <= 7 * 86_400_000


def test_conflict_view_keep_mine(qtbot, window, brain_path):
    trace_id = select_row(window, 0)
    editor = window.detail.editor
    editor.content.setPlainText("Mine")
    with Brain.open(brain_path, actor="agent") as other:  # a second connection writes
        theirs = other.get(trace_id)
        other.update(trace_id, {"content": "Theirs"}, expect_version=theirs.version)
    window.window_actions.save.trigger()
    assert editor.stack.currentWidget() is editor.conflict
    assert "Theirs" in editor.conflict.theirs_text.toPlainText()
    assert "Mine" in editor.conflict.mine_text.toPlainText()
    assert "agent" in editor.conflict.title.text()
    assert window.session.brain.get(trace_id).content == "Theirs"  # nothing overwritten
    editor.conflict.keep_button.click()
    saved = window.session.brain.get(trace_id)
    assert saved.content == "Mine" and saved.version == theirs.version + 2
    assert editor.stack.currentWidget() is not editor.conflict


def test_conflict_view_take_theirs(window, brain_path):
    trace_id = select_row(window, 1)
    editor = window.detail.editor
    editor.content.setPlainText("Mine")
    with Brain.open(brain_path, actor="agent") as other:
        other.update(trace_id, {"tags": ["theirs"]}, expect_version=other.get(trace_id).version)
    window.window_actions.save.trigger()
    rows = editor.conflict.fields.rowCount()
    assert editor.stack.currentWidget() is editor.conflict and rows == 1  # tags differ
    editor.conflict.theirs_button.click()
    assert editor.tags.tags() == ["theirs"] and not editor.dirty
    assert window.session.brain.get(trace_id).tags == ("theirs",)


def test_delete_key_on_the_table_and_undo(qtbot, window):
    trace_id = select_row(window, 2)
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert window.session.brain.get(trace_id).deleted
    qtbot.waitUntil(lambda: window.current_id() != trace_id, timeout=WAIT_MS)  # on to the next
    qtbot.keyClick(window, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert not window.session.brain.get(trace_id).deleted
    qtbot.waitUntil(lambda: window.current_id() == trace_id, timeout=WAIT_MS)  # back, selected
    # Del typed in the editor edits text; it never deletes the memory.
    window.detail.editor.content.setFocus()
    qtbot.keyClick(window.detail.editor.content, Qt.Key.Key_Delete)
    assert not window.session.brain.get(trace_id).deleted


def test_delete_says_so_moves_on_and_asks_about_an_unsaved_edit(qtbot, window):
    trace_id = select_row(window, 1)
    below = window.model.id_at(2)
    window.detail.editor.content.setPlainText("an edit not saved yet")
    window.edits.ask.unsaved = "cancel"
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert not window.session.brain.get(trace_id).deleted  # the person chose to stay
    window.edits.ask.unsaved = "discard"
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert window.session.brain.get(trace_id).deleted
    assert window.statusBar().currentMessage() == "Moved to the trash: 1 memory (Ctrl+Z undoes)"
    wait_idle(qtbot, window)
    qtbot.waitUntil(
        lambda: window.detail.trace is not None and window.detail.trace.id == below, timeout=WAIT_MS
    )
    assert window.selected_ids() == [below]  # the row below takes the trashed one's place


def test_purge_is_confirmed_and_not_undoable(qtbot, window):
    trace_id = select_row(window, 0)
    window.edits.ask.purge = False
    window.window_actions.purge.trigger()
    assert window.session.brain.get(trace_id)
    window.edits.ask.purge = True
    window.window_actions.purge.trigger()
    with pytest.raises(NotFound):
        window.session.brain.get(trace_id)
    assert window.session.undo_stack.count() == 0
    assert "cannot be undone" in window.statusBar().currentMessage()


def test_merge_and_bulk_tag_selected(qtbot, window):
    window.table.selectAll()
    ids = window.selected_ids()
    window.window_actions.add_tag.trigger()
    assert all("reviewed" in t.tags for t in window.session.brain.get_many(ids).values())
    window.table.clearSelection()
    for trace_id in ids[:2]:
        row = window.model.row_of(trace_id)
        window.table.selectionModel().select(
            window.model.index(row, 0),
            window.table.selectionModel().SelectionFlag.Select
            | window.table.selectionModel().SelectionFlag.Rows,
        )
    window.window_actions.merge.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 4, timeout=WAIT_MS)
    live = window.session.brain.list_traces(TraceFilter())
    assert "Merged by hand" in [t.content for t in live]
    window.window_actions.undo.trigger()
    assert window.statusBar().currentMessage().startswith("Undone: Merge 2 memories")
    qtbot.waitUntil(lambda: window.model.rowCount() == 5, timeout=WAIT_MS)
    window.window_actions.redo.trigger()
    assert window.statusBar().currentMessage().startswith("Redone: Merge 2 memories")
    window.window_actions.undo.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 5, timeout=WAIT_MS)
    window.window_actions.undo.trigger()
    assert not any("reviewed" in t.tags for t in window.session.brain.list_traces(TraceFilter()))


def test_table_shows_with_its_first_rows_before_the_count_and_readers_close(
    qtbot, tmp_path, brain_path, monkeypatch
):
    import threading

    from memgui.ui.window import table_selection

    counted = threading.Event()
    real_info_job = table_selection._info_job

    def slow_info_job(session, trash):
        counted.wait(WAIT_S)  # a count of a huge brain, still running
        return (yield from real_info_job(session, trash))

    monkeypatch.setattr(table_selection, "_info_job", slow_info_job)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, live=False)
    qtbot.addWidget(window)
    assert window.files.open_path(brain_path)
    qtbot.waitUntil(lambda: window.model.rowCount() == 5 and not window.model.busy, timeout=WAIT_MS)
    assert window.pages.currentWidget() is window.splitter
    assert window.counts_label.text() == ""
    counted.set()
    wait_idle(qtbot, window)
    readers = list(window.model._readers.idle)
    assert readers  # kept for the next query
    window.close_session()
    with pytest.raises(Exception):  # noqa: B017 - a closed connection refuses any call
        readers[0].count()
    window.close()


def test_an_undo_that_cannot_replay_says_why_not_undone(qtbot, window):
    trace_id = select_row(window, 0)
    before = window.session.brain.get(trace_id)
    window.detail.editor.content.setPlainText("mine")
    window.detail.editor.request_save()
    with Brain.open(window.session.path, actor="agent") as agent:
        agent.update(trace_id, {"content": "theirs"}, expect_version=before.version + 1)
    window.window_actions.undo.trigger()
    message = window.statusBar().currentMessage()
    assert message.startswith("Could not undo") and "conflict" in message
    assert window.session.brain.get(trace_id).content == "theirs"


def test_an_empty_editor_shows_no_error_after_a_search_is_cleared(qtbot, window):
    # The memory shown leaves the list (a search for a word it lacks), the search is
    # cleared: the editor, with nothing chosen, shows no complaint about its empty text.
    select_row(window, 0)
    editor = window.detail.editor
    window.search_bar.set_query("zzzwordnobodywrote")
    wait_idle(qtbot, window)
    assert window.detail.trace is None
    window.search_bar.set_query("")
    wait_idle(qtbot, window)
    assert not any(label.isVisibleTo(editor) for label in editor.errors.values())
