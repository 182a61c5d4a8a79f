"""The import window's keys and steps: Enter in the scope id, Tab out of
the review table, a conversation's messages ticked with it, choosing a format the detection
could not tell, and the revert button following Edit ▸ Undo / Redo."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from memgui.core.io.records import CONVERSATION, MESSAGE, NEW, TRACE, UPDATE
from memgui.ui.commands import NewTraceCommand, push
from memgui.ui.models.import_plan_model import Column
from tests.support.import_export import (
    WAIT_MS,
    commit_and_wait,
    open_and_plan,
    wait_for_plan,
    write_csv,
)
from tests.support.paths import FIXTURES

BRANCHING = FIXTURES / "chatgpt" / "branching.json"


def focus(qtbot, dialog, widget) -> None:
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=WAIT_MS)


def test_enter_in_the_scope_id_replans_with_it(qtbot, window, tmp_path):
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", 5))
    first = dialog.run.plan
    edit = dialog.review.options_bar.scope_id_edit
    focus(qtbot, dialog, edit)
    cancelled: list[str] = []
    dialog.run.cancelled.connect(cancelled.append)
    qtbot.keyClicks(edit, "project-x")
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    # The key started a re-plan, and the same key press did not cancel it: a new plan came.
    qtbot.waitUntil(lambda: bool(cancelled) or dialog.run.plan is not first, timeout=WAIT_MS)
    assert not cancelled
    wait_for_plan(qtbot, dialog)
    assert edit.text() == "project-x"
    assert dialog.run.plan.records[0].fields.get("scope_id") == "project-x"


def test_tab_leaves_the_review_table(qtbot, window, tmp_path):
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", 5))
    table = dialog.review.table
    table.selectRow(0)
    focus(qtbot, dialog, table)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is not table
    focus(qtbot, dialog, table)
    qtbot.keyClick(table, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is not table
    focus(qtbot, dialog, table)
    qtbot.keyClick(table, Qt.Key.Key_Down)  # the arrows still move between rows
    assert table.hasFocus() and table.currentIndex().row() == 1


def _accepted(plan, rows) -> list[bool]:
    return [plan.records[r].accepted for r in rows]


def test_a_conversation_takes_its_messages_and_memories_with_it(qtbot, window):
    dialog = open_and_plan(qtbot, window, BRANCHING)
    review, model = dialog.review, dialog.review.model
    plan = model.plan
    conversation = next(
        i for i, r in enumerate(plan.records) if r.kind == CONVERSATION and r.verdict == NEW
    )
    conversation_id = plan.records[conversation].fields["id"]
    messages = [
        i
        for i, r in enumerate(plan.records)
        if r.kind == MESSAGE and r.fields["conversation_id"] == conversation_id
    ]
    memories = [
        i
        for i, r in enumerate(plan.records)
        if r.kind == TRACE and r.fields["metadata"]["conversation_id"] == conversation_id
    ]
    assert messages and all(_accepted(plan, messages)) and memories
    before = review.accepted_count()
    index = model.index(conversation, Column.SOURCE)
    assert model.setData(index, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert not any(_accepted(plan, [conversation, *messages, *memories]))
    going = [i for i in messages + memories if plan.records[i].verdict in (NEW, UPDATE)]
    after = before - 1 - len(going)
    assert review.accepted_count() == after
    assert review.commit_button.text() == f"Commit {after} records"
    # Ticking one message brings its conversation back (without it the message cannot be
    # written); ticking the conversation brings all its messages back.
    one = model.index(messages[0], Column.SOURCE)
    assert model.setData(one, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert plan.records[conversation].accepted and not any(_accepted(plan, messages[1:]))
    model.setData(index, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    model.setData(index, Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert all(_accepted(plan, [conversation, *messages]))
    assert all(_accepted(plan, memories))
    # A memory un-ticked alone goes alone.
    model.setData(
        model.index(memories[0], Column.SOURCE),
        Qt.CheckState.Unchecked.value,
        Qt.ItemDataRole.CheckStateRole,
    )
    assert review.accepted_count() == before - 1
    result = commit_and_wait(qtbot, dialog)
    assert not result.errors and result.imported == before - 1


def test_a_format_detection_cannot_tell_can_be_chosen(qtbot, window, tmp_path):
    source = tmp_path / "facts-as-text.txt"
    source.write_text("content,tags\nThe sky is blue,facts\nWater is wet,facts\n")
    dialog = window.import_export.import_path(source)
    qtbot.addWidget(dialog)
    working = dialog.working
    qtbot.waitUntil(
        lambda: not dialog.run.running and working.format_row.isVisible(), timeout=WAIT_MS
    )
    assert working.message.text().startswith("Could not go on: ")
    assert not working.plan_button.isEnabled()  # nothing chosen yet
    working.format_box.setCurrentIndex(working.format_box.findData("csv"))
    working.plan_button.click()
    wait_for_plan(qtbot, dialog)
    plan = dialog.run.plan
    assert plan.format == "csv" and plan.counts["new"] == 2
    assert dialog.review.options_bar.format_box.currentData() == "csv"
    assert not working.format_row.isVisible()


def test_revert_button_and_summary_follow_undo_and_redo(qtbot, window, tmp_path):
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", 4))
    commit_and_wait(qtbot, dialog)
    review, stack = dialog.review, window.session.undo_stack
    summary = review.summary_label.text()
    assert review.revert_button.isEnabled()
    stack.undo()  # Edit ▸ Undo of the import
    assert not review.revert_button.isEnabled()
    assert review.summary_label.text() == summary + "  Reverted (Edit ▸ Redo brings it back)."
    stack.redo()
    assert review.revert_button.isEnabled() and review.summary_label.text() == summary
    review.revert_button.click()  # the latest step: its undo
    assert (
        not review.revert_button.isEnabled()
        and "Redo brings it back" in review.summary_label.text()
    )
    stack.redo()
    assert review.revert_button.isEnabled() and review.summary_label.text() == summary
    # After another edit, Revert is a step of its own, which Edit ▸ Undo takes back.
    push(window.session, NewTraceCommand(window.session, {"content": "A later memory"}))
    review.revert_button.click()
    assert not review.revert_button.isEnabled()
    assert review.summary_label.text() == summary + "  Reverted (Edit ▸ Undo brings it back)."
    stack.undo()
    assert review.revert_button.isEnabled() and review.summary_label.text() == summary


def test_a_plan_the_brain_overtook_is_made_again_and_shows_why(qtbot, window, tmp_path):
    source = write_csv(tmp_path / "facts.csv", 5)
    first = open_and_plan(qtbot, window, source)
    second = open_and_plan(qtbot, window, source)  # dropped twice
    assert commit_and_wait(qtbot, first).imported == 5
    before = window.session.brain.count()
    second.review.commit_button.click()
    qtbot.waitUntil(lambda: "Planned again" in second.review.summary_label.text(), timeout=WAIT_MS)
    wait_for_plan(qtbot, second)
    assert window.session.brain.count() == before  # nothing written twice
    assert second.run.plan.counts["new"] == 0 and second.run.plan.counts["duplicate"] == 5
