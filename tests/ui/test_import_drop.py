"""Dropping a vault folder or a ChatGPT export on the window: plan, review, commit, revert."""

from __future__ import annotations

from PySide6.QtWidgets import QToolBar

from memgui.core.model import TraceFilter
from tests.support.import_export import (
    CORPORA,
    commit_and_wait,
    drag_enter,
    drag_move,
    drop,
    drop_and_plan,
    mime_for,
    wait_for_plan,
)

EN_VAULT = CORPORA / "obsidian-help" / "en"
CHATGPT = CORPORA / "chatgpt" / "chatlore__fixture-conversations.json"


def test_dropping_the_english_help_vault_plans_commits_and_reverts(qtbot, window):
    brain = window.session.brain
    before = brain.count(TraceFilter())
    overlay = window.import_export.drops.overlay
    mime = mime_for(EN_VAULT)
    assert drag_enter(window.table.viewport(), mime).isAccepted()
    assert overlay.isVisible()
    assert "Drop to import the folder en" in overlay.text
    # Over the content only: the menus and the toolbar stay clear of its frame.
    assert overlay.geometry() == window.centralWidget().geometry()
    assert overlay.geometry().top() >= window.findChild(QToolBar).geometry().bottom()
    overlay.grab().save(str(window.session.path.with_name("drop.png")))  # renders, no error
    drop(window.table.viewport(), mime)
    assert not overlay.isVisible()
    dialog = window.import_export.last_import
    wait_for_plan(qtbot, dialog)
    review = dialog.review
    notes = len(list(EN_VAULT.rglob("*.md")))
    assert dialog.run.plan.counts["new"] == notes
    assert review.toggles["new"].text() == f"new {notes}"
    assert review.model.rowCount() == len(dialog.run.plan.records)
    assert review.commit_button.text() == f"Commit {notes} records"
    assert window.import_export.running_jobs() == []

    result = commit_and_wait(qtbot, dialog)
    assert result.imported == notes
    assert brain.count(TraceFilter()) == before + notes
    assert review.summary_label.text().startswith(f"Imported {notes}, skipped 0")
    assert review.revert_button.isVisible() and review.revert_button.isEnabled()
    assert not review.commit_button.isEnabled()
    assert window.session.undo_stack.undoText().startswith("Import")

    review.revert_button.click()
    assert brain.count(TraceFilter()) == before
    window.session.undo_stack.redo()  # the import's undo step brings it back
    assert brain.count(TraceFilter()) == before + notes


def test_dropping_a_chatgpt_export_writes_conversations_and_messages(qtbot, window):
    dialog = drop_and_plan(qtbot, window, CHATGPT)
    plan = dialog.run.plan
    assert plan.format == "chatgpt"
    assert "ChatGPT export" in dialog.review.options_bar.format_box.itemText(0)
    assert plan.counts["refused"] == 2  # a conversation without a mapping, one with nothing seen
    kinds = {r.kind for r in plan.records}
    assert {"conversation", "message"} <= kinds
    result = commit_and_wait(qtbot, dialog)
    assert result.imported == plan.counts["new"]
    assert result.refused == 2
    conversations = window.session.brain.db.conn.execute(
        "SELECT count(*) FROM conversations"
    ).fetchone()[0]
    assert conversations == sum(
        1 for r in plan.records if r.kind == "conversation" and r.verdict == "new"
    )


def test_an_unsupported_drop_says_why_and_opens_nothing(qtbot, window, tmp_path):
    picture = tmp_path / "holiday.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    overlay = window.import_export.drops.overlay
    mime = mime_for(picture)
    target = window.table.viewport()
    drag_enter(target, mime)
    assert overlay.isVisible()
    assert overlay.text.startswith("Cannot import holiday.png")
    assert "unknown content" in overlay.text
    assert not drag_move(target, mime).isAccepted()  # the "no" cursor
    drop(target, mime)
    assert window.import_export.last_import is None
    assert "Cannot import holiday.png" in window.statusBar().currentMessage()

    # A file dragged over the memory editor is an import too, never text pasted into it.
    editor = window.detail.editor.content.viewport()
    drag_enter(editor, mime_for(CHATGPT))
    assert overlay.text.startswith("Drop to import the file chatlore")
    two = mime_for(picture, CHATGPT)
    drag_enter(target, two)
    assert overlay.text == "Drop one file or folder at a time (2 items are dragged)"


def test_a_text_drag_is_left_to_the_editor(qtbot, window):
    from PySide6.QtCore import QMimeData

    mime = QMimeData()
    mime.setText("just words")
    drag_enter(window.search_bar.field, mime)
    assert not window.import_export.drops.overlay.isVisible()


def test_a_drop_is_taken_as_a_copy_never_a_move(qtbot, window):
    # A file manager offers copy or move, and proposes move; told "moved", it may delete
    # the vault. Every drop says copy, and one offering only a move is refused.
    from PySide6.QtCore import Qt

    copy, move = Qt.DropAction.CopyAction, Qt.DropAction.MoveAction
    target = window.table.viewport()
    mime = mime_for(CHATGPT)
    shift = Qt.KeyboardModifier.ShiftModifier  # the move proposed
    for event in (drag_enter(target, mime, keys=shift), drag_move(target, mime, keys=shift)):
        assert event.proposedAction() == move
        assert event.isAccepted() and event.dropAction() == copy
    dropped = drop(target, mime, keys=shift)
    assert dropped.isAccepted() and dropped.dropAction() == copy
    wait_for_plan(qtbot, window.import_export.last_import)
    window.import_export.last_import.close()
    drag_enter(target, mime, actions=move)
    only_move = drag_move(target, mime, actions=move)
    assert not only_move.isAccepted()
    assert "drop a copy" in window.import_export.drops.overlay.text
