"""The review with many records: only the refusals in one click, reasons cut at their end
and whole in the detail, what was not read as a list, verdicts that read "imported" after
the commit, a record's right-click menu, and fixing every record refused for one reason."""

from __future__ import annotations

import json

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QStyleOptionViewItem

from memgui.ui.importing.import_record_editor import RecordEditor
from memgui.ui.importing.review_tools import EndElideDelegate
from memgui.ui.models.import_plan_model import Column
from tests.support.import_export import (
    WAIT_MS,
    commit_and_wait,
    open_and_plan,
    wait_for_plan,
    write_notes,
)

TEMPLATE = "---\ncreated: {{{{date}}}}\ntags: [journal]\n---\n{body}\n"
NOTES = {
    "Templates/Daily.md": TEMPLATE.format(body="## Today\nWhat happened."),
    "Templates/Album.md": '---\ncreated: {{date}}\nartist: ""\n---\n',  # a template only
    "Templates/Book.md": TEMPLATE.format(body="## Notes on the book"),
    "Templates/Trip.md": TEMPLATE.format(body="## Where we went"),
    "Ideas.md": "Ideas: a shelf for the records\n",
    "Odd.md": "---\nid: [1, 2]\n---\nAn odd one\n",
}


def vault(tmp_path):
    (tmp_path / "vault" / "Templates").mkdir(parents=True)
    folder = write_notes(tmp_path / "vault", NOTES)
    (folder / "cover.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    return folder


def shown(review) -> list[str]:
    return [review.model.record(r).verdict for r in review.proxy.source_rows()]


def test_only_refusals_in_one_click_and_reasons_whole_in_the_detail(qtbot, window, tmp_path):
    dialog = open_and_plan(qtbot, window, vault(tmp_path))
    review = dialog.review
    review.only_refused_button.click()
    assert set(shown(review)) == {"refused"} and len(shown(review)) == 5
    review.show_all_button.click()
    assert "new" in shown(review)
    delegate = review.table.itemDelegateForColumn(Column.REASON)
    assert isinstance(delegate, EndElideDelegate)
    option = QStyleOptionViewItem()
    delegate.initStyleOption(option, review.proxy.index(0, Column.REASON))
    assert option.textElideMode == Qt.TextElideMode.ElideRight
    row = next(i for i, r in enumerate(review.model.plan.records) if r.verdict == "refused")
    review.table.selectRow(review.proxy.mapFromSource(review.model.index(row, 0)).row())
    reason = review.model.plan.records[row].reason
    assert reason in review.detail.reason_label.text() and review.detail.reason_label.isVisible()
    at = review.proxy.mapFromSource(review.model.index(row, Column.REASON))
    assert at.data(Qt.ItemDataRole.ToolTipRole) == reason  # whole on hover too
    # Right-click on a record: what can be done with it.
    rect = review.table.visualRect(review.proxy.index(0, 0))
    review.table.customContextMenuRequested.emit(QPoint(rect.center()))
    names = [a.text() for a in review.last_menu.actions() if not a.isSeparator()]
    assert "Show only refused" in names and "Copy reason" in names
    review.last_menu.close()
    dialog.close()


def test_not_read_opens_as_a_list(qtbot, window, tmp_path):
    dialog = open_and_plan(qtbot, window, vault(tmp_path))
    review = dialog.review
    assert "1 not read" in review.not_read_label.text()
    assert "cover.png" not in review.not_read_label.toolTip()  # no list in a tooltip
    listing = review.show_not_read()
    qtbot.addWidget(listing)
    assert listing.table.rowCount() == 1
    assert listing.table.item(0, 0).text().startswith("cover.png")
    listing.close()
    dialog.close()


def test_records_refused_for_one_reason_are_fixed_at_once(qtbot, window, tmp_path, monkeypatch):
    dialog = open_and_plan(qtbot, window, vault(tmp_path))
    review = dialog.review
    plan = review.model.plan
    templates = [
        i for i, r in enumerate(plan.records) if "Templates/" in r.source and r.verdict == "refused"
    ]
    assert len(templates) == 4
    review.table.selectRow(review.proxy.mapFromSource(review.model.index(templates[0], 0)).row())
    assert review.fix_alike_button.isVisible()
    assert review.fix_alike_button.text() == "Fix all 4 like this…"

    def fix_first(editor: RecordEditor) -> int:
        fields = json.loads(editor.fields.toPlainText())
        editor.fields.setPlainText(json.dumps({**fields, "tags": ["template"]}))
        with qtbot.waitSignal(editor.applied, timeout=WAIT_MS) as applied:
            editor.apply()  # checked again in a job
        assert applied.args == [True]
        return RecordEditor.DialogCode.Accepted

    monkeypatch.setattr(RecordEditor, "exec", fix_first)
    review.fix_alike_button.click()
    qtbot.waitUntil(lambda: review.fixes_label.text().startswith("Fixed"), timeout=WAIT_MS)
    for row in templates:
        record = plan.records[row]
        assert record.verdict == "new", record.reason
        assert "template" in record.fields["tags"]
        # Each its own text: after its front matter, or the whole of a template.
        assert record.fields["content"].startswith(("## ", "---\ncreated: {{date}}"))
    assert review.fixes_label.text().startswith(
        "Fixed 4 records refused for “front matter is not valid YAML"
    )
    odd = next(r for r in plan.records if r.source.startswith("Odd.md"))
    assert odd.verdict == "refused"  # another reason: left alone

    result = commit_and_wait(qtbot, dialog)
    assert result.imported == 5
    verdicts = {review.model.index(r, Column.VERDICT).data() for r in templates}
    assert verdicts == {"imported"}
    assert review.toggles["new"].text() == "imported (new) 5"
    dialog.close()


def test_a_folder_with_wikilinks_is_offered_as_a_vault(qtbot, window, tmp_path):
    folder = write_notes(
        tmp_path / "linked",
        {"a.md": "Alpha, see [[b]].\n", "b.md": "Beta, back to [[a]].\n"},
    )
    dialog = open_and_plan(qtbot, window, folder)
    note = dialog.review.format_note
    assert dialog.run.plan.format == "markdown"
    assert "[[wikilinks]] and #tags stay in the text" in note.effect.text()
    assert note.try_button.isVisible() and "Obsidian vault" in note.try_button.text()
    note.try_button.click()
    qtbot.waitUntil(
        lambda: dialog.run.plan is not None and dialog.run.plan.format == "obsidian",
        timeout=WAIT_MS,
    )
    wait_for_plan(qtbot, dialog)
    assert "[[wikilinks]] become links" in note.effect.text()
    assert not note.try_button.isVisible()
    dialog.close()
