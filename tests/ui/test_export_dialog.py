"""File ▸ Export…: runs as a job, lists what the format refused, saves that list."""

from __future__ import annotations

import csv
import json

from PySide6.QtCore import QItemSelectionModel

from memgui.ui.exporting.export_dialog import SELECTED, SHOWN
from tests.support.import_export import (
    make_dialog,
    run_export,
)


def test_jsonl_export_lists_the_refused_traces_and_saves_them(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)
    assert not dialog.embeddings_check.isEnabled()  # a JSON-only option
    run_export(qtbot, dialog, "jsonl", tmp_path / "out.jsonl")
    # Two sample memories have no agent-memory category: JSONL cannot hold them.
    assert dialog.export_result.exported == 3
    assert dialog.refused_table.rowCount() == 2
    fields = {dialog.refused_table.item(r, 2).text() for r in range(2)}
    assert fields == {"category"}
    assert "3" in dialog.status.text() and "2 refused" in dialog.status.text()
    assert dialog.save_button.isEnabled()
    saved = dialog.save_refused(str(tmp_path / "refused.json"))
    data = json.loads(saved.read_text())
    assert [r["field"] for r in data] == ["category", "category"]
    with dialog.save_refused(str(tmp_path / "refused.csv")).open() as handle:
        assert len(list(csv.DictReader(handle))) == 2
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 3  # the header and one line per memory


def test_export_of_the_selection_writes_only_the_selected(qtbot, window, tmp_path):
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for row in (0, 1):
        window.table.selectionModel().select(window.model.index(row, 0), flags)
    chosen = set(window.selected_ids())
    dialog = make_dialog(qtbot, window)
    assert dialog.scope_buttons[SELECTED].isEnabled()
    assert "5 memories the table shows" in dialog.scope_buttons[SHOWN].text()
    dialog.scope_buttons[SELECTED].setChecked(True)
    run_export(qtbot, dialog, "markdown", tmp_path / "notes")
    assert dialog.export_result.exported == 2
    written = {p.stem for p in (tmp_path / "notes").rglob("*.md")}
    assert written == chosen
    assert dialog.refused_table.rowCount() == 0 and not dialog.save_button.isEnabled()


def test_json_export_options_and_a_refused_destination(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("json"))
    assert dialog.embeddings_check.isEnabled() and dialog.conversations_check.isChecked()
    dialog.conversations_check.setChecked(False)
    run_export(qtbot, dialog, "json", tmp_path / "export.json")
    data = json.loads((tmp_path / "export.json").read_text())
    assert len(data["traces"]) == 5
    assert data.get("conversations", []) == []
    existing = tmp_path / "brain-copy.sqlite"
    existing.write_bytes(b"taken")
    run_export(qtbot, dialog, "sqlite", existing)
    assert dialog.status.text().startswith("The export failed")
    assert existing.read_bytes() == b"taken"


def test_a_typed_existing_json_file_is_replaced_only_when_the_person_says_so(
    qtbot, window, tmp_path, monkeypatch
):
    dialog = make_dialog(qtbot, window)
    existing = tmp_path / "taken.jsonl"
    existing.write_text("keep me\n")
    asked: list = []
    monkeypatch.setattr(dialog, "confirm_replace", lambda path: asked.append(path) or False)
    dialog.format_box.setCurrentIndex(dialog.format_box.findData("jsonl"))
    dialog.dest_edit.setText(str(existing))
    assert dialog.start_export() is None
    assert asked == [existing] and existing.read_text() == "keep me\n"
    assert "kept" in dialog.status.text()
    monkeypatch.setattr(dialog, "confirm_replace", lambda path: asked.append(path) or True)
    run_export(qtbot, dialog, "jsonl", existing)
    assert len(asked) == 2 and existing.read_text() != "keep me\n"
    fresh = tmp_path / "fresh.json"
    run_export(qtbot, dialog, "json", fresh)  # a new file: nothing to ask
    assert len(asked) == 2 and fresh.exists()


def test_the_refused_list_shows_each_memory_first_line(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)
    run_export(qtbot, dialog, "jsonl", tmp_path / "out.jsonl")
    assert dialog.refused_table.horizontalHeaderItem(1).text() == "Memory"
    ids = [dialog.refused_table.item(r, 0).text() for r in range(2)]
    traces = window.session.brain.get_many(ids)
    for row, trace_id in enumerate(ids):
        first = trace_id and traces[trace_id].content.strip().splitlines()[0].strip()
        assert first and dialog.refused_table.item(row, 1).text() == first


def test_the_scope_counts_follow_the_table_while_the_dialog_is_open(qtbot, window):
    dialog = make_dialog(qtbot, window)
    assert "0 selected" in dialog.scope_buttons[SELECTED].text()
    assert not dialog.scope_buttons[SELECTED].isEnabled()
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    for row in (0, 1, 2):
        window.table.selectionModel().select(window.model.index(row, 0), flags)
    assert "3 selected" in dialog.scope_buttons[SELECTED].text()
    assert dialog.scope_buttons[SELECTED].isEnabled()
    dialog.scope_buttons[SELECTED].setChecked(True)
    window.table.clearSelection()
    assert "0 selected" in dialog.scope_buttons[SELECTED].text()
    assert dialog.scope_group.checkedId() != SELECTED  # what it named is gone
    dialog.hide()
    window.table.selectionModel().select(window.model.index(4, 0), flags)
    dialog.show()  # shown again: counted again
    assert "1 selected" in dialog.scope_buttons[SELECTED].text()
    assert "5 memories the table shows" in dialog.scope_buttons[SHOWN].text()
