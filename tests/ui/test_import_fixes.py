"""The review page after the app audit: fixes kept across a re-plan, a duplicate within the
source named as such, titles that elide, the raw note in "Fix record…", and why a refused
record cannot be fixed."""

from __future__ import annotations

import threading

import pytest

from memgui.core.model import TraceFilter
from memgui.ui.importing.import_record_editor import RecordEditor
from tests.support.import_export import (
    CORPORA,
    WAIT_MS,
    apply_and_wait,
    commit_and_wait,
    open_and_plan,
    wait_for_plan,
    write_notes,
)

TEMPLATE = "---\ntitle: Album\ncreated: {{date}}\n---\nTracks I liked: none yet\n"
NOTES = {
    "template.md": TEMPLATE,  # kepano-style template: `{{date}}` is not valid YAML
    "first.md": "The rota changes every Monday\n",
    "second.md": "The rota changes every Monday\n",  # the same text as first.md
    "other.md": "Backups live in the north bucket\n",
}
FIXED = "Tracks I liked: fixed by hand"


@pytest.fixture
def notes(tmp_path):
    return write_notes(tmp_path / "notes", NOTES)


def row_of(review, source_end: str) -> int:
    plan = review.model.plan
    return next(i for i, r in enumerate(plan.records) if r.source.startswith(source_end))


def select(review, row: int) -> None:
    proxy_row = review.proxy.mapFromSource(review.model.index(row, 0)).row()
    review.table.selectRow(proxy_row)


def replan(qtbot, dialog, change) -> None:
    """Change an option (which re-plans) and wait for the new plan on the review page."""
    old = dialog.review.model.plan
    change()
    qtbot.waitUntil(lambda: dialog.review.model.plan is not old, timeout=WAIT_MS)
    wait_for_plan(qtbot, dialog)


def fix_by_hand(qtbot, review, monkeypatch, row: int, text: str) -> None:
    """Click "Fix record…" on `row` and apply `text` in the editor."""

    def exec_(editor: RecordEditor) -> int:
        editor.content.setPlainText(text)
        return int(apply_and_wait(qtbot, editor))

    monkeypatch.setattr(RecordEditor, "exec", exec_)
    select(review, row)
    assert review.fix_button.isEnabled()
    review.fix_button.click()


def test_a_fix_survives_a_replan_and_is_filed_under_the_new_scope(
    qtbot, window, notes, monkeypatch
):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    row = row_of(review, "template.md")
    assert review.model.plan.records[row].verdict == "refused"
    fix_by_hand(qtbot, review, monkeypatch, row, FIXED)
    assert review.model.plan.records[row].verdict == "new"
    replan(qtbot, dialog, lambda: review.options_bar.scope_box.setCurrentIndex(1))
    assert review.model.plan.options.scope == "thread"  # the first scope listed
    record = review.model.plan.records[row_of(review, "template.md")]
    assert record.verdict == "new"
    assert record.fields["content"] == FIXED and record.fields["scope"] == "thread"
    assert review.fixes_label.isVisibleTo(review)
    assert "Kept your fixes" in review.fixes_label.text()
    assert "template.md" in review.fixes_label.text()
    # A second re-plan keeps it too, and the commit writes it.
    replan(qtbot, dialog, lambda: review.options_bar.scope_box.setCurrentIndex(0))
    assert review.model.plan.records[row_of(review, "template.md")].verdict == "new"
    commit_and_wait(qtbot, dialog)
    contents = {t.content for t in window.session.brain.list_traces(TraceFilter(), limit=50)}
    assert FIXED in contents


def test_a_fix_the_new_plan_cannot_hold_is_named_as_dropped(qtbot, window, notes, monkeypatch):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    fix_by_hand(qtbot, review, monkeypatch, row_of(review, "template.md"), FIXED)
    (notes / "template.md").unlink()  # the note is gone: its fix has nowhere to go
    replan(qtbot, dialog, review.options_bar.dedup_check.toggle)
    text = review.fixes_label.text()
    assert review.fixes_label.isVisibleTo(review)
    assert "Dropped your fixes to template.md" in text and "Kept" not in text


def test_a_duplicate_within_the_source_names_the_earlier_record(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    plan = review.model.plan
    row = next(i for i, r in enumerate(plan.records) if r.verdict == "duplicate")
    duplicate = plan.records[row]
    earlier = "second.md" if duplicate.source.startswith("first.md") else "first.md"
    select(review, row)
    title = review.detail.existing_title.full_text()
    assert title.startswith(f"Same as record {earlier}") and title.endswith("of this import")
    assert "Already in the brain" not in title
    assert review.detail.existing_text.toPlainText().startswith("The rota changes")


def test_a_long_title_elides_and_keeps_the_whole_text_in_its_tooltip(qtbot, window, notes):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    select(review, row_of(review, "template.md"))
    label = review.detail.record_title
    label.resize(120, label.height())
    full = label.full_text()
    assert "front matter is not valid YAML" in full and label.toolTip() == full
    assert label.text().endswith("…") and len(label.text()) < len(full)
    assert label.fontMetrics().horizontalAdvance(label.text()) <= 120


def test_fix_record_shows_the_note_as_written_for_bad_front_matter(
    qtbot, window, notes, monkeypatch
):
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    seen: dict[str, str] = {}

    def exec_(editor: RecordEditor) -> int:
        seen["raw"] = editor.raw.toPlainText()
        seen["content"] = editor.content.toPlainText()
        seen["shown"] = str(editor.raw.isVisibleTo(editor))
        return 0

    monkeypatch.setattr(RecordEditor, "exec", exec_)
    select(review, row_of(review, "template.md"))
    review.fix_button.click()
    assert seen["raw"] == TEMPLATE and seen["shown"] == "True"
    assert seen["content"] == "Tracks I liked: none yet\n"  # the body, to start the fix from


def test_a_refused_conversation_says_why_it_cannot_be_fixed(qtbot, window):
    source = CORPORA / "chatgpt" / "chatlore__fixture-conversations.json"
    dialog = open_and_plan(qtbot, window, source)
    review = dialog.review
    plan = review.model.plan
    row = next(
        i for i, r in enumerate(plan.records) if r.kind == "conversation" and r.verdict == "refused"
    )
    select(review, row)
    assert not review.fix_button.isEnabled()
    why = review.fix_button.toolTip()
    assert "conversation record cannot be fixed here" in why
    assert review.fix_hint.full_text() == why
    new = next(i for i, r in enumerate(plan.records) if r.verdict == "new")
    select(review, new)
    assert "Only refused or error records" in review.fix_button.toolTip()
    assert review.fix_hint.full_text() == ""


def test_records_are_checked_against_the_brain_off_the_gui_thread(
    qtbot, window, notes, monkeypatch
):
    from memgui.core.io.planning import fixes
    from memgui.ui.importing import import_jobs

    on_gui_thread: list[bool] = []

    def watched(real):
        def check(*args, **kwargs):
            on_gui_thread.append(threading.current_thread() is threading.main_thread())
            return real(*args, **kwargs)

        return check

    monkeypatch.setattr(import_jobs, "revalidate", watched(import_jobs.revalidate))
    monkeypatch.setattr(fixes, "revalidate", watched(fixes.revalidate))
    dialog = open_and_plan(qtbot, window, notes)
    review = dialog.review
    fix_by_hand(qtbot, review, monkeypatch, row_of(review, "template.md"), FIXED)
    replan(qtbot, dialog, lambda: review.options_bar.scope_box.setCurrentIndex(1))
    assert on_gui_thread == [False, False]  # "Fix record…", then the re-plan's carried fix
    assert review.model.plan.records[row_of(review, "template.md")].verdict == "new"
