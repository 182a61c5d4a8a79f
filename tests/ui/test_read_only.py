"""A brain file memgui may not write, in the window: read and search it, change nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.ui.importing.import_dialog import open_import
from memgui.ui.importing.import_drop import check_drop
from memgui.ui.semantic.backfill import READ_ONLY_REFUSAL
from tests.support.import_export import mime_for
from tests.support.paths import SHARED
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle

AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


@pytest.fixture
def read_only_path(brain_path: Path):
    brain_path.chmod(0o444)  # no write bits: opened read-only, even by root
    yield brain_path
    brain_path.chmod(0o644)


def test_a_read_only_brain_is_browsed_and_searched_never_changed(qtbot, tmp_path, read_only_path):
    before = read_only_path.read_bytes()
    window = open_window(qtbot, tmp_path, read_only_path)
    try:
        assert window.read_only
        assert "(read-only)" in window.windowTitle()
        assert window.read_only_label.isVisible()
        a = window.window_actions
        assert a.find.isEnabled() and a.refresh.isEnabled() and a.trash_view.isEnabled()
        select_row(window, 0)
        shown = window.detail.editor
        assert shown.content.toPlainText()  # the memory shows
        writes = (a.new_memory, a.save, a.delete, a.purge, a.merge, a.add_tag, a.add_link)
        assert not any(action.isEnabled() for action in (*writes, a.import_file))
        assert shown.content.isReadOnly() and not shown.type_box.isEnabled()
        assert not shown.save_button.isVisible()
        for tab in (window.detail.links, window.detail.history):
            window.detail.setCurrentWidget(tab)
        assert not window.detail.links.add_button.isEnabled()
        assert not window.detail.links.remove_button.isEnabled()
        assert not window.detail.history.restore_button.isEnabled()
        window.detail.setCurrentWidget(shown)
        qtbot.keyClicks(shown.content, "typed")
        assert not shown.dirty
        qtbot.keyClick(window.table, Qt.Key.Key_Delete)  # the shortcut of a disabled action
        window.search_bar.field.setText("invoice")
        qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=WAIT_MS)
        wait_idle(qtbot, window)
        assert open_import(window, tmp_path) is None
        assert "read-only" in window.statusBar().currentMessage()
        assert not window.import_export.import_folder.isEnabled()
        dragged = mime_for(tmp_path)
        check = check_drop(dragged, brain_open=True, read_only=window.session.read_only)
        assert not check.ok and "read-only" in check.message
        assert window.semantic.refusal == READ_ONLY_REFUSAL
    finally:
        window.close()
    assert read_only_path.read_bytes() == before
    with Brain.open(read_only_path) as brain:
        assert brain.count() == 5  # nothing forgotten by the Delete key
        assert all(t.retrieval_count == 0 for t in brain.list_traces())  # a search is no recall


def test_a_writable_brain_opened_after_it_is_editable_again(qtbot, tmp_path, read_only_path):
    window = open_window(qtbot, tmp_path, read_only_path)
    try:
        writable = tmp_path / "writable.sqlite"
        with Brain.open(writable) as brain:
            brain.add("editable again")
        assert window.files.open_path(writable)
        wait_idle(qtbot, window)
        assert not window.read_only and not window.read_only_label.isVisible()
        assert "(read-only)" not in window.windowTitle()
        assert (
            window.window_actions.new_memory.isEnabled()
            and window.window_actions.import_file.isEnabled()
        )
        assert window.import_export.import_folder.isEnabled()
        select_row(window, 0)
        assert not window.detail.editor.content.isReadOnly()
        assert window.detail.editor.save_button.isVisible()
        window.detail.setCurrentWidget(window.detail.history)
        assert window.detail.history.restore_button.isEnabled()
    finally:
        window.close()
