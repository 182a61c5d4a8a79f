"""Edit ▸ Consolidate…: the plan reviewed in the dialog, applied as one batch, undone."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.core.consolidate import ConsolidationOptions, plan_consolidation
from memgui.core.model import DAY_MS, TraceFilter
from memgui.core.progress import run_to_end
from memgui.ui.consolidation.consolidation_dialog import ConsolidateDialog, open_consolidation
from memgui.ui.consolidation.consolidation_model import ConsolidationPlanModel, Role
from tests.support.waiting import WAIT_MS


def _aged(brain: Brain, text: str, days: float, **fields) -> str:
    now = int(time.time() * 1000)
    brain.clock = lambda: now - int(days * DAY_MS)
    try:
        return brain.add(text, **fields).id
    finally:
        brain.clock = lambda: int(time.time() * 1000)


@pytest.fixture
def brain_path(tmp_path):
    """Two weak memories, three copies of one, a fresh one."""
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        _aged(brain, "Lunch order for the offsite", 9)
        _aged(brain, "The printer was out of toner", 5)
        for tag in ("a", "b", "c"):
            brain.add("Alice prefers short answers", scope_id="alice", tags=[tag])
        brain.add("The build uses Python 3.11")
    return path


def planned(qtbot, window) -> ConsolidateDialog:
    dialog = open_consolidation(window)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.run.plan is not None and not dialog.run.running, timeout=WAIT_MS)
    return dialog


def rows(model, parent=None):
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    return [model.index(i, 0, parent) for i in range(model.rowCount(parent))]


def test_the_plan_model_passes_the_model_tester(qtmodeltester, brain_path):
    with Brain.open(brain_path) as brain:
        plan = run_to_end(plan_consolidation(brain, ConsolidationOptions()))
    model = ConsolidationPlanModel(plan)
    qtmodeltester.check(model)
    steps = rows(model)
    assert [i.data() for i in steps][:2] == ["Prune weak memories (2)", "Merge duplicates (2)"]
    [cluster] = rows(model, steps[1])
    members = rows(model, cluster)
    assert members[0].data().startswith("keep: ") and members[1].data().startswith("merge in: ")
    assert not members[0].flags() & Qt.ItemFlag.ItemIsUserCheckable  # the survivor stays


def test_review_apply_and_undo_from_the_edit_menu(qtbot, window):
    assert window.consolidate_action.isEnabled()
    dialog = planned(qtbot, window)
    model, brain = dialog.model, window.session.brain
    prune_step, merge_step = rows(model)[:2]
    first_prune, second_prune = rows(model, prune_step)
    weak_kept = first_prune.data(Role.Candidate).trace_id
    assert model.setData(first_prune, Qt.CheckState.Unchecked.value, Qt.ItemDataRole.CheckStateRole)
    assert prune_step.data(Qt.ItemDataRole.CheckStateRole) == Qt.CheckState.PartiallyChecked
    [cluster_index] = rows(model, merge_step)
    cluster = cluster_index.data(Role.Candidate)
    left_out = cluster.members[2].trace_id
    assert model.setData(rows(model, cluster_index)[2], Qt.CheckState.Unchecked.value,
                         Qt.ItemDataRole.CheckStateRole)  # fmt: skip
    dialog.tree.setCurrentIndex(cluster_index)
    detail = dialog.detail
    keep = cluster.members[1].trace_id
    detail.survivor.setCurrentIndex(detail.survivor.findData(keep))
    detail.text.setPlainText("Alice prefers short answers, code first")
    assert cluster.survivor_id == keep and cluster.content_edited
    assert dialog.status.text().startswith("Will apply: prune 1, merge 1")
    dialog.apply_button.click()
    qtbot.waitUntil(lambda: dialog.run.result is not None, timeout=WAIT_MS)
    assert dialog.status.text().startswith("Applied: pruned 1, merged 1")
    assert brain.get(keep).content == "Alice prefers short answers, code first"
    assert brain.get(cluster.members[0].trace_id).deleted and not brain.get(left_out).deleted
    assert (
        not brain.get(weak_kept).deleted
        and brain.get(second_prune.data(Role.Candidate).trace_id).deleted
    )
    assert not dialog.apply_button.isEnabled() and dialog.undo_button.isVisible()
    qtbot.waitUntil(lambda: window.session.undo_stack.canUndo(), timeout=WAIT_MS)
    assert window.session.undo_stack.undoText().startswith("Consolidate (pruned 1, merged 1")
    window.window_actions.undo.trigger()
    assert brain.count() == 6 and brain.get(keep).content == "Alice prefers short answers"
    assert dialog.status.text().startswith("Undone:") and not dialog.undo_button.isEnabled()
    window.window_actions.redo.trigger()
    assert brain.count() == 4 and dialog.undo_button.isEnabled()
    dialog.undo_button.click()  # the latest step: the same as Edit ▸ Undo
    assert brain.count() == 6


def test_empty_merged_text_cannot_be_applied(qtbot, window):
    dialog = planned(qtbot, window)
    merge_step = rows(dialog.model)[1]
    dialog.tree.setCurrentIndex(rows(dialog.model, merge_step)[0])
    dialog.detail.text.setPlainText("   ")
    assert "must not be empty" in dialog.status.text()
    assert not dialog.apply_button.isEnabled()
    dialog.detail.text.setPlainText("Alice likes it short")
    assert dialog.apply_button.isEnabled()


def test_a_plan_the_brain_overtook_is_planned_again(qtbot, window):
    dialog = planned(qtbot, window)
    prune = rows(dialog.model, rows(dialog.model)[0])[0].data(Role.Candidate)
    with Brain.open(window.session.path, actor="mcp:agent") as other:
        other.update(prune.trace_id, {"content": "Lunch order: soup for everyone"})
    first_plan = dialog.run.plan
    dialog.apply_button.click()
    qtbot.waitUntil(
        lambda: dialog.run.plan is not first_plan and not dialog.run.running, timeout=WAIT_MS
    )
    assert dialog.status.text().startswith("Planned again: the brain changed since")
    assert window.session.brain.count(TraceFilter(include_deleted=True)) == 6
    assert not window.session.brain.get(prune.trace_id).deleted


def test_cancel_while_the_chat_model_is_asked(qtbot, window, ollama_server, monkeypatch):
    with Brain.open(window.session.path) as brain:
        ids = [brain.add(f"release note {n}").id for n in range(5)]
        for a, b in zip(ids, ids[1:], strict=False):
            brain.link(a, b, "relates_to")
    asked, go_on = threading.Event(), threading.Event()

    def hold(_body):
        asked.set()
        go_on.wait(WAIT_MS / 1000)

    ollama_server.chat_hook = hold
    monkeypatch.setenv("MEMGUI_OLLAMA_URL", ollama_server.url)
    dialog = ConsolidateDialog(window)
    qtbot.addWidget(dialog)
    dialog.show()
    try:
        qtbot.waitUntil(asked.is_set, timeout=WAIT_MS)
        assert dialog.cancel_button.isVisible()
        dialog.cancel_button.click()
    finally:
        go_on.set()  # the chat call answers (a failed test must not leave it waiting)
    qtbot.waitUntil(lambda: not dialog.run.running, timeout=WAIT_MS)
    assert dialog.status.text() == "Planning was cancelled." and dialog.run.plan is None
    ollama_server.chat_hook = None
    dialog.plan_button.click()
    qtbot.waitUntil(lambda: dialog.run.plan is not None, timeout=WAIT_MS)
    assert len(dialog.run.plan.derive) == 1


def test_a_read_only_brain_cannot_be_consolidated(qtbot, window):
    window.session.brain.db.readonly = True
    window._set_brain_actions_enabled(True)
    assert not window.consolidate_action.isEnabled()
    assert open_consolidation(window) is None
