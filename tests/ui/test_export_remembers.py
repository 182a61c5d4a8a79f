"""The export dialog remembers the last format and folder, offers to open the folder, and
says why its count differs from the brain's (the trash); progress moves through each phase."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.io import ExportOptions, export
from memgui.ui.exporting import export_dialog
from tests.support.import_export import WAIT_MS, make_dialog, run_export
from tests.support.window import select_row, wait_idle


def test_the_dialog_remembers_offers_the_folder_and_explains_the_trash(
    qtbot, window, tmp_path, monkeypatch
):
    select_row(window, 0)
    window.window_actions.delete.trigger()  # one memory in the trash
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.counts_label.text().endswith("1 in trash"), timeout=WAIT_MS)
    out = tmp_path / "exports"
    out.mkdir()
    dialog = make_dialog(qtbot, window)
    run_export(qtbot, dialog, "obsidian", out / "vault")
    assert dialog.export_result.exported == 4
    assert "The 1 memory in the trash is not exported" in dialog.status.text()
    assert dialog.open_button.isVisible()
    opened = []
    monkeypatch.setattr(
        export_dialog.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile())
    )
    dialog.open_button.click()
    assert opened == [str(out / "vault")]
    dialog.close()

    again = make_dialog(qtbot, window)
    assert again.format == "obsidian"
    assert again.dest_edit.text().startswith(str(out))  # the last folder
    run_export(qtbot, again, "json", out / "all.json")
    assert "The 1 memory in the trash is included" in again.status.text()
    again.close()


def test_an_obsidian_export_reports_as_it_goes(tmp_path):
    with Brain.open(tmp_path / "b.sqlite") as brain:
        for n in range(60):
            brain.add(f"note number {n}")
        events = list(export(brain, tmp_path / "vault", "obsidian", ExportOptions()))
    counted = [e.done for e in events if e.total]
    assert counted[:3] == [0, 25, 50]  # the bar moves from the first notes on
    assert events[-1].total is None and "putting 60 notes" in events[-1].message
