"""What both engines serve (`storage.engine.BrainStore`), checked alike on a SQLite file and on
a real PostgreSQL server: the same calls give the same traces, refusals, conflicts, journal
and reverts."""

from __future__ import annotations

import json

import pytest

from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.model import TraceFilter
from memgui.core.storage.engine import BrainStore

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def test_add_get_update_forget_restore(store: BrainStore) -> None:
    trace = store.add("We deploy on Fridays", tags=["ops"], category="DECISION", scope_id="u1")
    assert trace.changes is not None and trace.changes.added == {trace.id}
    got = store.get(trace.id)
    assert (got.content, got.tags, got.category, got.scope_id, got.version) == (
        "We deploy on Fridays",
        ("ops",),
        "DECISION",
        "u1",
        1,
    )
    # Pinned without a stability of its own: the six days are written, as on SQLite.
    assert got.metadata["decay"]["stability"] == 6 * 86_400_000
    updated = store.update(trace.id, {"content": "We deploy on Mondays"}, expect_version=1)
    assert updated.version == 2 and store.get(trace.id).content == "We deploy on Mondays"
    assert store.forget(trace.id).deleted
    assert store.count() == 0 and store.count(TraceFilter(deleted=True)) == 1
    again = store.forget(trace.id)  # already forgotten: nothing written
    assert again.version == 3 and again.changes is not None and not again.changes
    assert not store.restore(trace.id).deleted


def test_stale_version_is_a_conflict_and_writes_nothing(store: BrainStore) -> None:
    trace = store.add("first")
    store.update(trace.id, {"tags": ["a"]})
    with pytest.raises(Conflict) as caught:
        store.update(trace.id, {"content": "lost"}, expect_version=1)
    assert (caught.value.expected, caught.value.actual) == (1, 2)
    assert store.get(trace.id).content == "first"
    assert [e.op for e in store.history(trace.id)] == ["add", "update"]


def test_bad_input_names_the_field_and_writes_nothing(store: BrainStore) -> None:
    with pytest.raises(InvalidArgument) as caught:
        store.add("x", type="dream")
    assert caught.value.field == "type"
    with pytest.raises(InvalidArgument) as caught:
        store.add("   ")
    assert caught.value.field == "content"
    trace = store.add("kept")
    with pytest.raises(InvalidArgument) as caught:
        store.update(trace.id, {"colour": "red"})
    assert caught.value.field == "patch"
    with pytest.raises(InvalidArgument) as caught:
        store.add("twice", id=trace.id)
    assert caught.value.field == "id"
    with pytest.raises(InvalidArgument) as caught:
        store.list_traces(limit=0)
    assert caught.value.field == "limit"
    with pytest.raises(NotFound):
        store.get("mt_missing")
    assert [t.content for t in store.list_traces()] == ["kept"]


def test_list_filters_and_orders_alike(store: BrainStore) -> None:
    store.clock = iter(range(1_000, 10_000, 10)).__next__  # type: ignore[attr-defined]
    a = store.add("alpha", type="semantic", tags=["x", "y"], scope="thread", scope_id="t1")
    b = store.add("beta", tags=["y"])
    c = store.add("gamma", category="TODO")
    assert [t.id for t in store.list_traces()] == [c.id, b.id, a.id]
    assert [t.id for t in store.list_traces(descending=False, limit=2)] == [a.id, b.id]
    assert [t.id for t in store.list_traces(offset=1)] == [b.id, a.id]
    assert [t.id for t in store.list_traces(after=(c.created_at, c.id))] == [b.id, a.id]
    assert [t.id for t in store.list_traces(TraceFilter(tag="y"))] == [b.id, a.id]
    assert [t.id for t in store.list_traces(TraceFilter(type="semantic"))] == [a.id]
    assert [t.id for t in store.list_traces(TraceFilter(scope_id="t1"))] == [a.id]
    assert [t.id for t in store.list_traces(TraceFilter(category="TODO"))] == [c.id]
    assert [t.id for t in store.list_traces(order="content", descending=False)] == [
        a.id,
        b.id,
        c.id,
    ]
    assert store.count(TraceFilter(tag="y")) == 2


def test_keyword_search_by_words_phrase_and_tag(store: BrainStore) -> None:
    hit = store.add("The deployment failed after the migration", tags=["incident"])
    other = store.add("Lunch before the migration")
    result = store.search("deployment", mode="keyword")
    assert [h.trace.id for h in result.hits] == [hit.id]
    assert result.search_mode == "keyword" and result.hits[0].score > 0
    assert [h.trace.id for h in store.search('"deployment failed"').hits] == [hit.id]
    assert [h.trace.id for h in store.search("incident", mode="keyword").hits] == [hit.id]
    assert {h.trace.id for h in store.search("migration").hits} == {hit.id, other.id}
    assert store.search("giraffe", mode="keyword").hits == ()
    store.update(hit.id, {"content": "Rolled back cleanly"})
    assert store.search("deployment", mode="keyword").hits == ()
    assert [h.trace.id for h in store.search("rolled").hits] == [hit.id]
    store.forget(hit.id)
    assert store.search("rolled", mode="keyword").hits == ()


def test_revert_undoes_a_batch_and_can_itself_be_reverted(store: BrainStore) -> None:
    trace = store.add("original", tags=["t"])
    edited = store.update(trace.id, {"content": "edited", "tags": ["u"]})
    assert edited.changes is not None
    undone = store.revert(edited.changes.batch_id)
    assert undone.edited == {trace.id} and undone.kind == "revert"
    back = store.get(trace.id)
    assert (back.content, back.tags, back.version) == ("original", ("t",), 3)
    store.revert(undone.batch_id)
    assert store.get(trace.id).content == "edited"


def test_purge_reverts_and_add_reverts_away(store: BrainStore) -> None:
    trace = store.add("to be purged", tags=["p"])
    purged = store.purge(trace.id)
    assert purged.removed == {trace.id}
    with pytest.raises(NotFound):
        store.get(trace.id)
    store.revert(purged.batch_id)
    assert store.get(trace.id).content == "to be purged"
    assert [h.trace.id for h in store.search("purged", mode="keyword").hits] == [trace.id]
    added = store.add("short-lived")
    assert added.changes is not None
    store.revert(added.changes.batch_id)
    assert store.count() == 1


def test_revert_of_a_trace_changed_since_is_a_conflict(store: BrainStore) -> None:
    trace = store.add("v1")
    first = store.update(trace.id, {"content": "v2"})
    store.update(trace.id, {"content": "v3"})
    assert first.changes is not None
    with pytest.raises(Conflict):
        store.revert(first.changes.batch_id)
    assert store.get(trace.id).content == "v3"
    with pytest.raises(NotFound):
        store.revert("b_none")


def _journal_rows(store: BrainStore, trace_id: str) -> list[tuple[str, object, object]]:
    """A trace's journal rows as stored (op, before, after), on either engine."""
    sql = "SELECT op, before, after FROM memgui_journal WHERE trace_id = {} ORDER BY id"
    db = getattr(store, "db", None)
    if db is not None:
        rows = db.conn.execute(sql.format("?"), (trace_id,)).fetchall()
    else:
        rows = store.conn.execute(sql.format("%s"), (trace_id,)).fetchall()  # type: ignore[attr-defined]
    return [(op, json.loads(b) if b else None, json.loads(a) if a else None) for op, b, a in rows]


def test_the_journal_keeps_changed_fields_and_reads_back_whole(store: BrainStore) -> None:
    trace = store.add("A long text about the deployment window. " * 20, tags=["ops"])
    store.forget(trace.id)
    (_, _, added), (op, old, new) = _journal_rows(store, trace.id)
    assert added == {"version": 1}
    assert op == "forget" and isinstance(old, dict) and isinstance(new, dict)
    assert set(old) == set(new) == {"deleted", "version", "updated_at"}
    add, forget = store.history(trace.id)
    assert add.after is not None and add.after["content"] == trace.content
    assert forget.before == add.after
    assert forget.after is not None and forget.after["deleted"] is True
    assert forget.after["tags"] == ["ops"]
    store.revert(forget.batch_id)
    back = store.get(trace.id)
    assert not back.deleted and back.content == trace.content and back.tags == ("ops",)


def test_info_counts_the_brain(store: BrainStore) -> None:
    store.add("one")
    store.forget(store.add("two").id)
    info = store.info()
    assert (info["brain_id"], info["traces"], info["live"], info["deleted"]) == ("team", 2, 1, 1)


def test_every_order_of_the_table_sorts_alike(store: BrainStore) -> None:
    """The window's columns sort the same on both engines: the title (metadata's, else the
    content without leading blanks, case folded), columns that may be empty, and ids."""
    store.clock = iter(range(1_000, 10_000, 10)).__next__  # type: ignore[attr-defined]
    a = store.add("  zebra notes", metadata={"title": "Apple"})
    b = store.add("banana", category="TODO", ttl_secs=60)
    c = store.add("Cherry", tags=["t"])
    assert [t.id for t in store.list_traces(order="title", descending=False)] == [a.id, b.id, c.id]
    assert [t.id for t in store.list_traces(order="title")] == [c.id, b.id, a.id]
    for order in ("category", "expires_at", "last_accessed", "created_at", "id"):
        for descending in (True, False):
            listed = [t.id for t in store.list_traces(order=order, descending=descending)]
            ids = store.list_ids(order=order, descending=descending)  # type: ignore[attr-defined]
            assert listed == ids, (order, descending)
    # An empty value sorts lowest on both: first going up, last going down.
    assert [t.id for t in store.list_traces(order="category", descending=False)][-1] == b.id
    assert [t.id for t in store.list_traces(order="expires_at")][0] == b.id


def test_the_windows_reads_answer_alike(store: BrainStore) -> None:
    """What the window asks besides `BrainStore`: the filter lists' counts, the ids of a
    view in slices, a batch of calls as one journal batch, and the tolerant undo."""
    # Adds a millisecond apart at least: the newest-first slices do not fall to id order.
    store.clock = iter(range(1_000, 10_000, 10)).__next__  # type: ignore[attr-defined]
    a = store.add("one", type="semantic", tags=["x", "y"], category="TODO")
    b = store.add("two", tags=["y"])
    c = store.add("three", scope="thread")
    store.forget(c.id)
    facets = store.facets()  # type: ignore[attr-defined]
    assert facets.types == {"semantic": 1, "episodic": 1} and facets.total == 2
    assert facets.tags == {"y": 2, "x": 1} and facets.categories == {"TODO": 1}
    assert store.facets(deleted=True).scopes == {"thread": 1}  # type: ignore[attr-defined]
    slices = list(store.list_id_slices(size=1))  # type: ignore[attr-defined]
    assert slices == [[b.id], [a.id]]
    with store.batch(actor="gui", kind="edit") as batch:  # type: ignore[attr-defined]
        one = store.update(a.id, {"tags": ["x"]})
        two = store.update(b.id, {"tags": []})
    assert one.changes.edited == {a.id} and two.changes.edited == {b.id}
    assert batch.changes.edited == {a.id, b.id}
    assert {e.trace_id for e in store.batch_entries(batch)} == {a.id, b.id}
    first = store.update(a.id, {"content": "one, edited"})
    second = store.update(a.id, {"content": "one, edited twice"})
    store.undo(second.changes.batch_id)  # type: ignore[attr-defined]
    store.undo(first.changes.batch_id)  # the version moved by the first undo: tolerated
    assert store.get(a.id).content == "one"


def test_a_search_notes_its_results_as_recalled(store: BrainStore) -> None:
    found = store.add("the recall test about deploys")
    other = store.add("unrelated words")
    store.clock = lambda: found.created_at + 60_000  # type: ignore[attr-defined]
    quiet = store.search("deploys", mode="keyword", record_recall=False)
    assert [h.trace.retrieval_count for h in quiet.hits] == [0]
    hits = store.search("deploys", mode="keyword").hits
    assert [(h.trace.id, h.trace.retrieval_count) for h in hits] == [(found.id, 1)]
    assert hits[0].trace.last_accessed == found.created_at + 60_000
    recalled = store.get(found.id)
    assert (recalled.retrieval_count, recalled.version) == (1, found.version)  # no edit
    assert [e.op for e in store.history(found.id)] == ["add"]  # bookkeeping, not journaled
    assert store.get(other.id).retrieval_count == 0
    store.forget(found.id)
    assert store.search("deploys", mode="keyword").hits == ()
    assert store.get(found.id).retrieval_count == 1
