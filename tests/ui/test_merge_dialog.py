"""The merge dialog: its default text and the core's rule on an empty merged text."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox

from memgui.core.brain import Brain
from memgui.ui.dialogs.merge_dialog import MergeDialog, default_content, survivor_of


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
