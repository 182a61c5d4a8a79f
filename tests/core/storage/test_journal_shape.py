"""The journal's shape since schema 5: changed fields for an edit, the version for an add, and
rows of the older shape (whole snapshots) still read, reverted and shown after migrating."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.core.storage import schema
from tests.bench.bench_import import jsonl_export

LONG = "A memory long enough that a copy of it in the journal would show. " * 30


def raw_rows(brain: Brain) -> list[tuple[str, str, dict | None, dict | None]]:
    rows = brain.db.conn.execute(
        "SELECT op, trace_id, before, after FROM memgui_journal ORDER BY id"
    ).fetchall()
    return [
        (op, tid, json.loads(b) if b else None, json.loads(a) if a else None)
        for op, tid, b, a in rows
    ]


def journal_bytes(brain: Brain, op: str) -> int:
    return int(
        brain.db.conn.execute(
            "SELECT total(length(before)) + total(length(after)) FROM memgui_journal WHERE op = ?",
            (op,),
        ).get
    )


def trace_state(brain: Brain, trace_id: str) -> tuple:
    return brain.db.conn.execute(
        "SELECT type, scope, scope_id, content, tags, emotions, metadata, deleted, category, "
        "expires_at, created_at, strength FROM memory_traces WHERE id = ?",
        (trace_id,),
    ).fetchone()


def test_a_forget_journals_only_the_fields_it_changed_and_reverts_exactly(brain: Brain) -> None:
    t = brain.add(LONG, tags=["keep"], metadata={"title": "Kept"}, category="DECISION")
    before = trace_state(brain, t.id)
    brain.forget(t.id)
    op, trace_id, old, new = raw_rows(brain)[-1]
    assert (op, trace_id) == ("forget", t.id)
    assert old is not None and new is not None
    assert set(new) == {"deleted", "version", "updated_at"} == set(old)
    assert (old["deleted"], new["deleted"]) == (False, True)
    assert new["version"] == old["version"] + 1
    # Bytes per forget: the three fields, nothing of the text (was two whole snapshots).
    assert journal_bytes(brain, "forget") < 120
    # Read back, the row is whole: history shows what the trace was and became.
    entry = brain.history(t.id)[-1]
    assert entry.before is not None and entry.after is not None
    assert entry.before["content"] == entry.after["content"] == LONG
    assert entry.before["deleted"] is False and entry.after["deleted"] is True
    assert entry.after["metadata"]["title"] == "Kept"
    brain.revert(entry.batch_id)
    assert trace_state(brain, t.id) == before
    assert not brain.get(t.id).deleted


def test_an_edit_journals_its_changed_fields_and_an_add_its_version(brain: Brain) -> None:
    t = brain.add(LONG, tags=["a"])
    brain.update(t.id, {"tags": ["a", "b"]})
    rows = raw_rows(brain)
    assert rows[0][2] is None and rows[0][3] == {"version": 1}  # the row is the copy
    _op, _id, old, new = rows[1]
    assert old is not None and new is not None
    # (`updated_at` too, unless both writes fell in the same millisecond)
    assert {"tags", "version"} <= set(new) <= {"tags", "version", "updated_at"}
    assert set(old) == set(new)
    assert (old["tags"], new["tags"]) == (["a"], ["a", "b"])
    assert journal_bytes(brain, "add") + journal_bytes(brain, "update") < 200
    add, update = brain.history(t.id)
    assert add.before is None and add.after is not None and add.after["tags"] == ["a"]
    assert add.after["content"] == LONG and add.after["version"] == 1
    assert update.before == add.after
    assert update.after is not None and update.after["tags"] == ["a", "b"]
    brain.revert(update.batch_id)
    assert brain.get(t.id).tags == ("a",)
    brain.revert(add.batch_id)
    assert brain.list_ids() == []


def test_revert_still_refuses_a_trace_changed_since(brain: Brain) -> None:
    t = brain.add("one", tags=["x"])
    brain.forget(t.id)
    forget_batch = brain.history(t.id)[-1].batch_id
    brain.update(t.id, {"tags": ["y"]})  # an edit of a field the forget did not change
    with pytest.raises(Conflict):
        brain.revert(forget_batch)
    assert brain.get(t.id).deleted and brain.get(t.id).tags == ("y",)


def test_journal_bytes_per_imported_record_stay_small(tmp_path: Path) -> None:
    source = jsonl_export(tmp_path / "memories.jsonl", 300, random.Random(3))
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        planned = run_to_end(plan(brain, source, options=ImportOptions(format="jsonl")))
        run_to_end(commit(brain, planned))
        count = brain.count()
        assert count == 300
        per_record = journal_bytes(brain, "import") / count
        assert per_record < 20  # {"version":1}; it was ~690 bytes, the whole trace again
        entries = brain.batch_entries(brain.journal_since(0)[-1].batch_id)
        assert all(e.after is not None and e.after["content"] for e in entries)
        brain.revert(entries[0].batch_id)
        assert brain.count() == 0


def _to_schema_3_shape(path: Path) -> None:
    """Rewrite a brain's journal as memgui of schema 3 wrote it: every trace row a whole
    snapshot before and after (the states read back now are exactly those), and its meta
    rows at schema 3."""
    with Brain.open(path, actor="test") as brain:
        whole = brain.journal_since(0, limit=10_000)
    conn = Brain.open(path, actor="test")
    try:
        with conn.db.lock:
            conn.db.conn.execute("BEGIN IMMEDIATE")
            for entry in whole:
                conn.db.conn.execute(
                    "UPDATE memgui_journal SET before = ?, after = ? WHERE id = ?",
                    (
                        json.dumps(entry.before) if entry.before is not None else None,
                        json.dumps(entry.after) if entry.after is not None else None,
                        entry.id,
                    ),
                )
            conn.db.conn.execute("DROP TABLE memgui_stems")  # schema 9's
            conn.db.conn.execute(
                "UPDATE brain_meta SET value = '3' WHERE key = ?", (schema.SCHEMA_KEY,)
            )
            conn.db.conn.execute("COMMIT")
    finally:
        conn.close()


def test_a_journal_of_the_older_shape_reverts_and_shows_history_after_migrating(
    brain_path: Path,
) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        t = brain.add("first text", tags=["old"])
        brain.update(t.id, {"content": "second text"})
        brain.forget(t.id)
        other = brain.add("untouched")
        shown = brain.history(t.id)
    _to_schema_3_shape(brain_path)
    with Brain.open(brain_path, actor="test") as brain:
        assert brain.info()["schema_version"] == 3 and not brain.db.is_current
        rows = raw_rows(brain)
        assert all("id" in (after or before) for _op, _t, before, after in rows)  # whole
        assert brain.history(t.id) == shown  # read as they are, before any write
        brain.update(other.id, {"tags": ["new"]})  # the first write migrates
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION
        assert raw_rows(brain)[: len(rows)] == rows  # the older rows are left as they were
        assert brain.history(t.id) == shown
        history = brain.history(t.id)
        assert [e.op for e in history] == ["add", "update", "forget"]
        assert history[1].before is not None and history[1].before["content"] == "first text"
        assert history[1].after is not None and history[1].after["content"] == "second text"
        # Old rows revert as before, and a new row follows an old one in history.
        brain.revert(history[2].batch_id)  # the forget
        assert not brain.get(t.id).deleted
        brain.revert(history[1].batch_id)  # the edit (its version moved: the edit is there)
        assert brain.get(t.id).content == "first text"
        newest = brain.history(t.id)
        assert [e.op for e in newest] == ["add", "update", "forget", "revert", "revert"]
        assert newest[-1].before is not None and newest[-1].after is not None
        assert (newest[-1].before["content"], newest[-1].after["content"]) == (
            "second text",
            "first text",
        )
        brain.revert(history[0].batch_id)  # the add: the trace goes
        assert brain.list_ids() == [other.id]
