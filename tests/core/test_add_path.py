"""The single-add path: its statements, the Trace it returns, ids, and failed writes."""

from __future__ import annotations

import dataclasses
import threading
import uuid

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument
from memgui.core.model import Trace, new_trace_id, trace_from_fields

NOW = 1_767_225_600_000


def statements_of(brain: Brain, call) -> list[str]:
    seen: list[str] = []

    def trace(_cursor: object, sql: str, _bindings: object) -> bool:
        seen.append(sql.split("(")[0].strip())
        return True

    brain.db.conn.exec_trace = trace
    try:
        call()
    finally:
        brain.db.conn.exec_trace = None
    return seen


def row_count(brain: Brain, table: str) -> int:
    return brain.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_an_add_is_one_transaction_of_three_inserts(brain: Brain) -> None:
    brain.add("the first write also records the brain's meta rows")
    assert statements_of(brain, lambda: brain.add("a fact", tags=["t"])) == [
        "BEGIN IMMEDIATE",
        "INSERT INTO memory_traces",
        "INSERT INTO memgui_fts_pending",
        "INSERT INTO memgui_journal",
        "COMMIT",
    ]


def test_the_returned_trace_is_the_stored_one(brain: Brain) -> None:
    brain.clock = lambda: NOW
    added = brain.add(
        "Deploys go through staging",
        type="procedural",
        scope="organization",
        scope_id="acme",
        category="DECISION",
        tags=["deploy", "deploy", "ops"],
        ttl_secs=60,
        metadata={"source": "chat"},
        strength=0.5,
    )
    assert added == brain.get(added.id)
    assert added.tags == ("deploy", "ops") and added.rowid > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        added.content = "changed"  # type: ignore[misc]


def test_a_trace_from_fields_equals_one_from_its_constructor() -> None:
    values = {
        f.name: f.default if f.default is not dataclasses.MISSING else None
        for f in dataclasses.fields(Trace)
    }
    values.update(id="mt_1", tags=("a",), metadata={"k": 1}, emotions={}, deleted=False)
    fast = trace_from_fields(values)
    assert fast == Trace(**values)
    assert repr(fast) == repr(Trace(**values))
    assert dataclasses.replace(fast, content="x").content == "x"


def test_trace_ids_are_distinct_version_4_uuids() -> None:
    ids = [new_trace_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for trace_id in ids:
        assert trace_id.startswith("mt_")
        parsed = uuid.UUID(trace_id[3:])
        assert str(parsed) == trace_id[3:]
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_batch_ids_follow_the_order_of_the_adds(brain: Brain) -> None:
    for i in range(30):
        brain.add(f"fact {i}")
    batches = [
        r[0] for r in brain.db.conn.execute("SELECT batch_id FROM memgui_journal ORDER BY id")
    ]
    assert len(set(batches)) == 30 and batches == sorted(batches)


def test_a_failed_write_keeps_nothing_and_frees_the_writer(brain: Brain) -> None:
    kept = brain.add("kept")
    with pytest.raises(RuntimeError, match="stop"), brain.write("add"):
        brain.add("rolled back")
        raise RuntimeError("stop")
    with pytest.raises(InvalidArgument, match="already exists"):
        brain.add("same id", id=kept.id)
    assert (row_count(brain, "memory_traces"), row_count(brain, "memgui_journal")) == (1, 1)
    done = []
    writer = threading.Thread(target=lambda: done.append(brain.add("from a thread")))
    writer.start()
    writer.join(timeout=60)  # a safety net: the add takes milliseconds
    assert len(done) == 1
    # What the add returns names it alone: nothing of the writes rolled back before it.
    assert done[0].changes is not None and done[0].changes.added == {done[0].id}


def test_a_failure_inside_a_batch_undoes_the_whole_batch(brain: Brain) -> None:
    kept = brain.add("kept")
    with pytest.raises(InvalidArgument), brain.batch():
        brain.add("would be rolled back")
        brain.add("taken id", id=kept.id)
    assert [t.id for t in brain.list_traces()] == [kept.id]
    assert brain.add("next").id != kept.id


def test_journal_ids_grow_without_a_sequence_row(brain: Brain) -> None:
    ids = [brain.add(f"fact {i}").id for i in range(3)]
    rows = brain.db.conn.execute("SELECT id, trace_id FROM memgui_journal ORDER BY id").fetchall()
    assert [trace_id for _, trace_id in rows] == ids  # in the order written
    assert [journal_id for journal_id, _ in rows] == [1, 2, 3]
    tables = {r[0] for r in brain.db.conn.execute("SELECT name FROM sqlite_master")}
    assert (
        "sqlite_sequence" not in tables
        or not brain.db.conn.execute(
            "SELECT 1 FROM sqlite_sequence WHERE name = 'memgui_journal'"
        ).fetchall()
    )
