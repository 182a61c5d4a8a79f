"""`bulk_rows.insert_traces` writes what `store.insert_trace` writes one by one, in a few
statements; bulk work pauses the garbage collector and restores it."""

from __future__ import annotations

import gc
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.io.planning.validate import trace_snapshot
from memgui.core.io.writing import trace_rows
from memgui.core.progress import gc_paused, paused_steps
from memgui.core.search import fulltext
from memgui.core.storage import bulk_rows, store

NOW = 1_767_225_600_000
TEXTS = (
    "The release builds run on tagged commits only",
    "東京の天気は晴れです",  # Japanese, no spaces
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",  # Thai, with combining marks
    "Ünïcödé café résumé",
)


def snapshots(prefix: str, count: int) -> list[dict]:
    out = []
    for i in range(count):
        fields = {
            "content": f"{TEXTS[i % len(TEXTS)]} {i}",
            "type": "semantic",
            "scope_id": "team" if i % 2 else "",
            "tags": ["bulk", f"tag{i % 3}"],
            "metadata": {"source": "test", "scopeId": "stale"},
            "stability_ms": 86_400_000,
            "created_at": NOW + i,
        }
        out.append(trace_snapshot(fields, f"{prefix}{i:04d}", NOW))
    return out


def table(brain: Brain, sql: str) -> list[tuple]:
    with brain.db.lock:
        return brain.db.conn.execute(sql).fetchall()


def journal(brain: Brain) -> list[tuple]:
    return table(brain, "SELECT op, trace_id, before, after FROM memgui_journal ORDER BY id")


def ids(brain: Brain, query: str) -> set[str]:
    return {t.id for t in brain.search(query, limit=50, record_recall=False).traces}


def test_bulk_rows_journal_and_index_equal_one_by_one(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "bulk").mkdir()
    one_path, bulk_path = tmp_path / "one" / "brain.sqlite", tmp_path / "bulk" / "brain.sqlite"
    with Brain.open(one_path) as one, Brain.open(bulk_path) as bulk:
        with one.write("add") as batch:
            for snap in snapshots("mt_", 12):
                store.insert_trace(one.db, batch, one.brain_id, snap, op="import")
        with bulk.write("add") as batch:
            rowids = bulk_rows.insert_traces(
                bulk.db, batch, bulk.brain_id, snapshots("mt_", 12), "import"
            )
        assert batch.changes().added == {f"mt_{i:04d}" for i in range(12)}
        rows = "SELECT rowid, * FROM memory_traces ORDER BY rowid"
        assert table(bulk, rows) == table(one, rows)
        assert rowids == [r[0] for r in table(bulk, rows)]
        assert journal(bulk) == journal(one)
        for query in ("tagged", "天気", "ช่องว่าง", "cafe", "tag1"):
            assert ids(bulk, query) == ids(one, query), query
        assert ids(bulk, "天気") == {"mt_0001", "mt_0005", "mt_0009"}


def test_rowids_follow_the_largest_even_after_a_purge(brain: Brain) -> None:
    first = brain.add("first")
    last = brain.add("last")
    brain.purge(last.id)
    top = table(brain, "SELECT max(rowid) FROM memory_traces")[0][0]
    with brain.write("add") as batch:
        rowids = bulk_rows.insert_traces(brain.db, batch, brain.brain_id, snapshots("mt_b", 3))
    assert rowids == [top + 1, top + 2, top + 3]
    assert ids(brain, "tagged") == {"mt_b0000"}
    assert {t.id for t in brain.list_traces()} == {first.id, "mt_b0000", "mt_b0001", "mt_b0002"}
    check = "INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('integrity-check', 1)"
    assert table(brain, check) == []


def test_embeddings_are_stored_and_marked(brain: Brain) -> None:
    vector = bytes(range(16))
    with brain.write("add") as batch:
        bulk_rows.insert_traces(
            brain.db, batch, brain.brain_id, snapshots("mt_e", 2), embeddings=[vector, None]
        )
    rows = table(brain, "SELECT id, embedding, embedding_status FROM memory_traces ORDER BY id")
    assert rows == [("mt_e0000", vector, 1), ("mt_e0001", None, 0)]


def test_nothing_given_writes_nothing(brain: Brain) -> None:
    brain.add("keep me")
    before = journal(brain)
    with brain.write("add") as batch:
        assert bulk_rows.insert_traces(brain.db, batch, brain.brain_id, []) == []
    assert journal(brain) == before


def test_a_taken_id_fails_the_whole_transaction(brain: Brain) -> None:
    held = brain.add("already here")
    snaps = snapshots("mt_t", 3)
    snaps[1]["id"] = held.id
    before = journal(brain)
    with pytest.raises(apsw.ConstraintError, match="memory_traces.id"), brain.write("add") as b:
        bulk_rows.insert_traces(brain.db, b, brain.brain_id, snaps)
    assert table(brain, "SELECT count(*) FROM memory_traces")[0][0] == 1
    assert journal(brain) == before
    assert ids(brain, "tagged") == set()
    assert not fulltext.has_pending(brain.db)


def test_embeddings_must_match_the_snapshots(brain: Brain) -> None:
    with pytest.raises(ValueError, match="zip"), brain.write("add") as batch:
        bulk_rows.insert_traces(
            brain.db, batch, brain.brain_id, snapshots("mt_z", 2), "add", [None]
        )
    assert table(brain, "SELECT count(*) FROM memory_traces")[0][0] == 0


def test_the_collector_pauses_and_comes_back_as_it_was() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("a failing import")
    assert gc.isenabled()


def _job(log: list[str]):
    try:
        for step in range(3):
            log.append(f"step {step}: collector {'on' if gc.isenabled() else 'off'}")
            yield step
    except RuntimeError as error:
        log.append(f"caught {error}")
        yield 99
    finally:
        log.append("closed")
    return "done"


def test_steps_run_paused_and_the_job_keeps_its_own_ending() -> None:
    log: list[str] = []
    steps = paused_steps(_job(log))
    assert next(steps) == 0
    assert gc.isenabled()  # suspended between steps: the collector runs
    assert steps.throw(RuntimeError("cancel")) == 99  # a thrown exception reaches the job
    with pytest.raises(StopIteration) as finished:
        next(steps)
    assert finished.value.value == "done"
    assert log == ["step 0: collector off", "caught cancel", "closed"]
    log.clear()
    steps = paused_steps(_job(log))
    next(steps)
    steps.close()  # a job closed between steps ends at once
    assert log == ["step 0: collector off", "closed"] and gc.isenabled()


def test_a_big_bulk_insert_pauses_the_insert_triggers_and_keeps_them(brain: Brain) -> None:
    from memgui.core.storage import schema

    brain.add("first")

    def triggers() -> set[str]:
        return {r[0] for r in table(brain, "SELECT name FROM sqlite_master WHERE type='trigger'")}

    with brain.write("add") as batch:
        bulk_rows.insert_traces(brain.db, batch, brain.brain_id, snapshots("mt_big", 600), "import")
    assert triggers() == set(schema.MEMGUI_TRIGGER_NAMES)
    assert "mt_big0000" in ids(brain, "tagged")
    pending_kinds = {r[0] for r in table(brain, "SELECT DISTINCT indexed FROM memgui_fts_pending")}
    assert pending_kinds <= {0}
    # A failing bulk insert rolls back with its pause: the triggers are all there.
    try:
        with brain.write("add") as batch:
            bulk_rows.insert_traces(brain.db, batch, brain.brain_id, snapshots("mt_big", 600))
    except Exception:  # the ids exist: a constraint error
        pass
    assert triggers() == set(schema.MEMGUI_TRIGGER_NAMES)


def index_terms(brain: Brain, table: str) -> list[tuple]:
    """Every (term, rowid, column, offset) the FTS5 index `table` holds."""
    name = f"vocab_{table}"
    with brain.db.lock:
        conn = brain.db.conn
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} "
            f"USING fts5vocab(main, {table}, 'instance')"
        )
        return conn.execute(f"SELECT * FROM {name} ORDER BY 1, 2, 3, 4").fetchall()


def test_rows_built_once_and_indexed_as_written_equal_one_by_one(tmp_path: Path) -> None:
    """`bulk_rows.insert_rows` (an import's new traces) writes the rows, journal and the
    three full-text indexes `insert_trace` writes one by one, with nothing left pending."""
    (tmp_path / "one").mkdir()
    (tmp_path / "bulk").mkdir()
    one_path, bulk_path = tmp_path / "one" / "brain.sqlite", tmp_path / "bulk" / "brain.sqlite"
    with Brain.open(one_path) as one, Brain.open(bulk_path) as bulk:
        snaps = snapshots("mt_", 12)
        snaps[3]["metadata"] = {"title": "Quarterly plumcot review"}
        with one.write("add") as batch:
            for snap in snaps:
                store.insert_trace(one.db, batch, one.brain_id, dict(snap), op="import")
            fulltext.flush_in_transaction(one.db)
        with bulk.write("add") as batch:
            built = [trace_rows.snapshot_row(bulk.brain_id, dict(s), None) for s in snaps]
            rowids = bulk_rows.insert_rows(
                bulk.db, batch, bulk.brain_id, [r for r, _ in built], [t for _, t in built]
            )
            assert fulltext.pending_count(bulk.db) == 0  # indexed as written
        assert batch.changes().added == {f"mt_{i:04d}" for i in range(12)}
        rows = "SELECT rowid, * FROM memory_traces ORDER BY rowid"
        assert table(bulk, rows) == table(one, rows)
        assert rowids == [r[0] for r in table(bulk, rows)]
        assert journal(bulk) == journal(one)
        for index in ("memory_traces_fts", "memgui_fts", "memgui_stems"):
            assert index_terms(bulk, index) == index_terms(one, index), index
        assert ids(bulk, "plumcot") == {"mt_0003"}
