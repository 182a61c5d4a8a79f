"""Reviewing a ChatGPT export: a conversation's memories follow its check box; the
conversations are listed with title, date and counts, and can be searched; sources are named
by the conversation's title."""

from __future__ import annotations

from PySide6.QtCore import Qt

from memgui.core.io import RecordKind
from memgui.core.model import TraceFilter
from memgui.ui.models.import_plan_model import Column
from tests.support.import_export import CORPORA, commit_and_wait, open_and_plan

CHATLORE = CORPORA / "chatgpt" / "chatlore__fixture-conversations.json"
PKUPPENS = CORPORA / "chatgpt" / "pkuppens-my_chat_gpt__conversations.json"


def conversation_row(plan, title: str) -> int:
    return next(
        i
        for i, r in enumerate(plan.records)
        if r.kind == RecordKind.CONVERSATION and r.fields.get("title") == title
    )


def test_unticking_a_conversation_leaves_out_its_memories(qtbot, window):
    dialog = open_and_plan(qtbot, window, CHATLORE)
    review = dialog.review
    plan = review.model.plan
    row = conversation_row(plan, "Trip ideas")
    conversation_id = plan.records[row].fields["id"]
    index = review.model.index(row, Column.SOURCE)
    assert review.model.setData(index, Qt.CheckState.Unchecked.value, Qt.CheckStateRole)
    left_out = [
        r for r in plan.records
        if r.kind in (RecordKind.TRACE, RecordKind.MESSAGE)
        and conversation_id in (r.fields.get("conversation_id"),
                                (r.fields.get("metadata") or {}).get("conversation_id"))
    ]  # fmt: skip
    assert left_out and not any(r.accepted for r in left_out)
    assert {r.kind for r in left_out} == {RecordKind.TRACE, RecordKind.MESSAGE}

    # Ticking one of its memories ticks the conversation (and its messages) again.
    memory = next(r for r in left_out if r.kind == RecordKind.TRACE)
    memory_row = plan.records.index(memory)
    memory_box = review.model.index(memory_row, Column.SOURCE)
    review.model.setData(memory_box, Qt.CheckState.Checked.value, Qt.CheckStateRole)
    assert plan.records[row].accepted
    assert all(r.accepted for r in left_out if r.kind == RecordKind.MESSAGE)
    review.model.setData(index, Qt.CheckState.Unchecked.value, Qt.CheckStateRole)

    commit_and_wait(qtbot, dialog)
    brain = window.session.brain
    imported = [
        t for t in brain.list_traces(TraceFilter(), limit=200) if "conversation_id" in t.metadata
    ]
    assert imported and {t.title for t in imported} == {"Postgres indexing"}
    for trace in imported:  # each memory's Conversation tab has its chat
        assert brain.conversation_of(trace.id) is not None


def test_a_real_export_unticked_conversation_by_conversation(qtbot, window):
    dialog = open_and_plan(qtbot, window, PKUPPENS)
    review = dialog.review
    plan = review.model.plan
    kept = {}
    for row, record in enumerate(plan.records):
        if record.kind == RecordKind.CONVERSATION and record.verdict == "new":
            keep = len(kept) % 3 == 0
            kept[record.fields["id"]] = keep
            if not keep:
                review.model.setData(
                    review.model.index(row, Column.SOURCE),
                    Qt.CheckState.Unchecked.value,
                    Qt.CheckStateRole,
                )
    commit_and_wait(qtbot, dialog)
    brain = window.session.brain
    chats = [
        t for t in brain.list_traces(TraceFilter(), limit=200) if "conversation_id" in t.metadata
    ]
    assert chats
    for trace in chats:
        assert kept[trace.metadata["conversation_id"]], trace.title
        assert brain.conversation_of(trace.id) is not None


def test_the_conversations_are_listed_searched_and_shown_one_at_a_time(
    qtbot, window, qtmodeltester
):
    dialog = open_and_plan(qtbot, window, CHATLORE)
    review = dialog.review
    listing = review.conversations
    qtmodeltester.check(listing.model)
    assert listing.isVisibleTo(review)
    assert review.table.textElideMode() == Qt.TextElideMode.ElideRight
    rows = {
        listing.proxy.index(r, 0).data(): [listing.proxy.index(r, c).data() for c in (1, 2, 3)]
        for r in range(listing.proxy.rowCount())
    }
    assert rows["Postgres indexing"][1:] == ["6", "2"]  # messages, memories
    assert rows["Trip ideas"][1:] == ["2", "1"]
    assert rows["Trip ideas"][0].startswith("20")  # its date
    assert "Broken record" in rows  # refused (no messages), still listed
    assert listing.count.text() == f"{len(rows)} conversations"

    listing.search.setText("trip")
    assert listing.proxy.rowCount() == 1
    assert listing.count.text() == f"1 of {len(rows)} conversations"
    listing.table.selectRow(0)
    shown = [review.model.index(r, Column.SOURCE).data() for r in review.proxy.source_rows()]
    assert shown == ["Trip ideas", "Trip ideas › message 1", "Trip ideas › message 2",
                     "Trip ideas › memory 1"]  # fmt: skip
    # Its check box is the conversation's: the messages and the memory follow it.
    box = listing.proxy.index(0, 0)
    assert listing.proxy.setData(box, Qt.CheckState.Unchecked.value, Qt.CheckStateRole)
    assert not any(review.model.record(r).accepted for r in review.proxy.source_rows())
    listing.show_all()
    assert review.proxy.rowCount() == len(review.model.plan.records)


def test_a_file_plan_shows_no_conversations_and_keeps_its_sources(qtbot, window, tmp_path):
    from tests.support.import_export import write_notes

    notes = write_notes(tmp_path / "notes", {"a.md": "Alpha\n", "b.md": "Beta\n"})
    review = open_and_plan(qtbot, window, notes).review
    assert not review.conversations.isVisibleTo(review)
    assert review.table.textElideMode() == Qt.TextElideMode.ElideMiddle
    sources = {review.model.index(r, Column.SOURCE).data() for r in range(2)}
    assert sources == {"a.md:1", "b.md:1"}
