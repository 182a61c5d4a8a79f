"""The welcome page's Import… takes a file or a folder, and says that dropping works."""

from __future__ import annotations

from memgui.ui.importing import import_dialog
from tests.support.import_export import wait_for_plan, write_notes
from tests.support.window import open_window


def test_welcome_import_asks_for_a_file_or_a_folder(qtbot, tmp_path, monkeypatch):
    window = open_window(qtbot, tmp_path, tmp_path / "empty.sqlite")
    welcome = window.welcome
    assert window.pages.currentWidget() is welcome
    labels = [a.text().replace("&", "") for a in welcome.import_button.menu().actions()]
    assert labels[0].startswith("A file…") and labels[1].startswith("A folder…")
    assert (
        "drop a file or a folder" in welcome.findChild(type(welcome.path_label), "drop_hint").text()
    )
    folder = write_notes(tmp_path / "notes", {"a.md": "Alpha\n"})
    asked: list[bool] = []
    monkeypatch.setattr(
        import_dialog,
        "choose_source",
        lambda _parent, is_folder: asked.append(is_folder) or str(folder),
    )
    welcome.import_button.menu().actions()[1].trigger()
    assert asked == [True]
    dialog = window.import_export.last_import or window.findChild(import_dialog.ImportDialog)
    wait_for_plan(qtbot, dialog)
    assert dialog.run.plan.counts["new"] == 1
    dialog.close()
    window.close()
