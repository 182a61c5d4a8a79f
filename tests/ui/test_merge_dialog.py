"""The merge dialog: its default text and the core's rule on an empty merged text."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox

from memgui.core.brain import Brain
from memgui.ui.dialogs.merge_dialog import MergeDialog, default_content, survivor_of
from tests.support.waiting import WAIT_MS


def test_merge_dialog_refuses_blank_text_in_its_fields_words(qtbot, tmp_path):
    with Brain.open(tmp_path / "b.sqlite") as brain:
        first = brain.add("Deploys go through staging")
        second = brain.add("Staging needs green checks")
        brain.search("staging")  # both recalled once: a tie, so the first given survives
        traces = [brain.get(first.id), brain.get(second.id)]
    assert survivor_of(traces).id == first.id
    assert default_content(traces) == f"{first.content}\n\n{second.content}"
    dialog = MergeDialog(traces)
    qtbot.addWidget(dialog)
    dialog.content.setPlainText("  \n ")
    ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    ok.click()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.error.text() == "Merged content must not be empty (got '  \\n ')"
    dialog.content.setPlainText("Deploys go through staging with green checks")
    ok.click()
    assert dialog.result() == QDialog.DialogCode.Accepted


def test_the_person_picks_the_survivor_and_the_text_follows(qtbot, tmp_path):
    with Brain.open(tmp_path / "b.sqlite") as brain:
        first = brain.add("Deploys go through staging", metadata={"title": "Deploy rule"})
        second = brain.add("Staging needs green checks")
        brain.search("deploys")  # the first is the most recalled: the default
        traces = [brain.get(first.id), brain.get(second.id)]
    dialog = MergeDialog(traces)
    qtbot.addWidget(dialog)
    shown = [dialog.listing.item(r).text() for r in range(dialog.listing.count())]
    assert shown == [
        "Deploy rule — Deploys go through staging  (recalled 1×, the most recalled)",
        "Staging needs green checks  (recalled 0×)",
    ]
    assert dialog.survivor_id() == first.id
    dialog.listing.setCurrentRow(1)
    assert dialog.survivor_id() == second.id
    assert dialog.merged_content() == f"{second.content}\n\n{first.content}"
    dialog.content.setPlainText("My own words")
    dialog.listing.setCurrentRow(0)  # a text the person wrote stays
    assert dialog.merged_content() == "My own words" and dialog.survivor_id() == first.id


def test_a_merge_keeps_the_picked_memory_with_its_neighbours_and_undo_restores(qtbot, tmp_path):
    from memgui.core.io import ImportOptions, commit, plan
    from memgui.core.progress import run_to_end
    from tests.support.window import open_window, wait_idle

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Alpha.md").write_text("Alpha links [[Kiwi]].\n", encoding="utf-8")
    (vault / "Beta.md").write_text("Beta links [[Mango]].\n", encoding="utf-8")
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        options = ImportOptions(format="obsidian")
        run_to_end(commit(brain, run_to_end(plan(brain, vault, options=options))))
        ids = {t.title: t.id for t in brain.list_traces()}
        brain.search("alpha")  # Alpha is the default survivor
    window = open_window(qtbot, tmp_path, path)
    window.edits.ask.keep = ids["Beta"]
    for trace_id in ids.values():
        window.table.selectionModel().select(
            window.model.index(window.model.row_of(trace_id), 0),
            window.table.selectionModel().SelectionFlag.Select
            | window.table.selectionModel().SelectionFlag.Rows,
        )
    window.window_actions.merge.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=WAIT_MS)
    brain = window.session.brain
    assert window.model.id_at(0) == ids["Beta"]
    assert "Merged 2 memories into “Beta”" in window.statusBar().currentMessage()
    assert sorted(n.label for n in brain.neighbours(ids["Beta"])) == ["Kiwi", "Mango"]
    window.window_actions.undo.trigger()
    qtbot.waitUntil(lambda: window.model.rowCount() == 2, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert [n.label for n in brain.neighbours(ids["Beta"])] == ["Mango"]
    assert [n.label for n in brain.neighbours(ids["Alpha"])] == ["Kiwi"]
