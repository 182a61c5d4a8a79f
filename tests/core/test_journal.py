"""The journal: history, revert (itself revertible), conflicts, batches."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, NotFound


def state(brain: Brain) -> list[tuple]:
    rows = brain.db.conn.execute(
        "SELECT id, content, tags, deleted, scope_id FROM memory_traces ORDER BY id"
    ).fetchall()
    links = brain.db.conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()
    return [*rows, *links]


def test_every_change_is_journaled_with_before_and_after(brain: Brain) -> None:
    t = brain.add("v1", tags=["x"])
    brain.update(t.id, {"content": "v2"})
    brain.forget(t.id)
    brain.restore(t.id)
    history = brain.history(t.id)
    assert [e.op for e in history] == ["add", "update", "forget", "restore"]
    assert history[0].before is None and history[0].after["content"] == "v1"
    assert history[1].before["content"] == "v1" and history[1].after["content"] == "v2"
    assert all(e.actor == "test" for e in history)
    assert len({e.batch_id for e in history}) == 4


def test_revert_a_batch_and_revert_the_revert(brain: Brain) -> None:
    keep = brain.add("keep")
    before = state(brain)
    with brain.batch(actor="import:test") as batch:
        new = brain.add("imported")
        brain.update(keep.id, {"tags": ["touched"]})
        brain.link(new.id, keep.id, "relates_to")
    assert state(brain) != before
    changes = brain.revert(batch.batch_id)
    assert changes.kind == "revert" and new.id in changes.traces
    assert state(brain) == before
    redo_batch = brain.journal_since(0)[-1].batch_id
    brain.revert(redo_batch)
    assert brain.get(new.id).content == "imported"
    assert brain.get(keep.id).tags == ("touched",)
    assert brain.related(keep.id)[0].id == new.id


def test_revert_of_a_purge_brings_back_the_trace_and_its_links(brain: Brain) -> None:
    a, b = brain.add("a", tags=["t"]), brain.add("b")
    brain.link(a.id, b.id, "supersedes")
    before = state(brain)
    brain.purge(a.id)
    purge_batch = brain.journal_since(0)[-1].batch_id
    brain.revert(purge_batch)
    assert state(brain) == before
    assert brain.search("a", record_recall=False).traces[0].id == a.id


def test_revert_refuses_when_the_trace_changed_since(brain: Brain) -> None:
    t = brain.add("one")
    brain.update(t.id, {"content": "two"})
    batch = brain.history(t.id)[-1].batch_id
    brain.update(t.id, {"content": "three"})
    with pytest.raises(Conflict):
        brain.revert(batch)
    assert brain.get(t.id).content == "three"


def test_revert_unknown_batch(brain: Brain) -> None:
    with pytest.raises(NotFound, match="missing_id='b_nope'"):
        brain.revert("b_nope")


def test_failed_batch_writes_nothing(brain: Brain) -> None:
    brain.add("seed")
    before = state(brain)
    with pytest.raises(RuntimeError), brain.batch():
        brain.add("half")
        raise RuntimeError("crash in the middle")
    assert state(brain) == before


def test_a_batch_returns_what_its_calls_changed_together(brain: Brain) -> None:
    with brain.batch(actor="gui") as batch:
        a = brain.add("a")
        b = brain.add("b")
    assert batch.changes.added == {a.id, b.id} and batch.changes.actor == "gui"
    assert batch.changes.batch_id == batch.batch_id
    # Each call names what it did itself, in the batch it joined.
    assert a.changes is not None and a.changes.added == {a.id}
    assert a.changes.batch_id == batch.batch_id


def test_undo_twice_in_a_row_reverts_older_batches_after_newer_ones(brain: Brain) -> None:
    t = brain.add("v1")
    brain.update(t.id, {"content": "v2"})
    brain.update(t.id, {"content": "v3"})
    first, second = (e.batch_id for e in brain.history(t.id)[1:3])
    brain.revert(second)
    assert brain.get(t.id).content == "v2"
    brain.revert(first)  # the version moved, the edit it made is still there
    assert brain.get(t.id).content == "v1"


def test_revert_after_a_recall_keeps_the_recall(brain: Brain) -> None:
    t = brain.add("apples and pears")
    brain.update(t.id, {"tags": ["fruit"]})
    batch = brain.history(t.id)[-1].batch_id
    brain.search("apples")
    brain.revert(batch)
    after = brain.get(t.id)
    assert after.tags == () and after.retrieval_count == 1


def test_journal_rows_without_states_are_cheap(brain: Brain) -> None:
    t = brain.add("x")
    rows = brain.journal_since(0, states=False)
    assert [(r.op, r.trace_id, r.before, r.after) for r in rows] == [("add", t.id, None, None)]
    assert brain.last_journal_id() == rows[-1].id
    assert brain.batch_entries(rows[-1].batch_id)[0].after["content"] == "x"


def test_history_shows_links_from_both_sides_without_scanning_the_journal(brain: Brain) -> None:
    a, b, other = brain.add("a"), brain.add("b"), brain.add("c")
    brain.link(a.id, b.id, "supersedes")
    brain.unlink(a.id, b.id, "supersedes")
    brain.link(other.id, a.id, "caused_by")
    assert [e.op for e in brain.history(b.id)] == ["add", "link", "unlink"]
    assert [e.op for e in brain.history(a.id)] == ["add", "link", "unlink", "link"]
    plan = " ".join(
        str(row)
        for row in brain.db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM memgui_journal WHERE brain_id = ?1 "
            "AND op IN ('link', 'unlink') "
            "AND json_extract(coalesce(after, before), '$.to_id') = ?2",
            (brain.brain_id, a.id),
        )
    )
    assert "idx_memgui_journal_link_to" in plan and "SCAN" not in plan
