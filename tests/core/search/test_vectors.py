"""The vector index: sqlite-vec table, model pin, keeping in step, reindex, the matrix cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import vector_cache, vectors
from memgui.core.search.embed import pack_vector, unpack_vector


def brain_filter() -> TraceFilter:
    return TraceFilter(include_deleted=True)


def unit(*values: float, dims: int = 8) -> np.ndarray:
    vector = np.zeros(dims, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


@pytest.fixture
def brain(tmp_path: Path) -> Brain:
    opened = Brain.open(tmp_path / "brain.sqlite")
    yield opened
    opened.close()
    vector_cache.forget_cache()


def store(brain: Brain, content: str, vector: np.ndarray) -> int:
    """Add a trace and give it a vector the way the backfill does."""
    trace = brain.add(content)
    with brain.write("embed"):
        vectors.pin_model(brain.db.conn, brain.brain_id, "test-model", len(vector))
        vectors.write_embedding(brain.db.conn, brain.brain_id, trace.rowid, vector)
    return trace.rowid


def vec_rowids(brain: Brain) -> list[int]:
    rows = brain.db.conn.execute(f"SELECT rowid FROM {vectors.VEC_TABLE} ORDER BY rowid")
    return [r[0] for r in rows]


def test_write_indexes_blob_and_vec0(brain: Brain) -> None:
    rowid = store(brain, "one", unit(1, 0))
    blob, status = brain.db.conn.execute(
        "SELECT embedding, embedding_status FROM memory_traces WHERE rowid = ?", (rowid,)
    ).fetchone()
    assert status == 1 and blob == pack_vector(unit(1, 0))
    assert vec_rowids(brain) == [rowid]
    assert vectors.index_dimensions(brain.db.conn) == 8
    assert vectors.pinned_model(brain.db.conn, brain.brain_id) == ("test-model", 8)


def test_pin_refuses_other_model_and_dimension(brain: Brain) -> None:
    store(brain, "one", unit(1, 0))
    conn = brain.db.conn
    with pytest.raises(
        vectors.EmbeddingModelMismatch,
        match=r"use the brain's model \(`--embed-model test-model`\), or re-embed every trace "
        "with `memgui embed --rebuild --model other`",
    ):
        vectors.check_pin(conn, brain.brain_id, "other", None)
    with pytest.raises(vectors.EmbeddingModelMismatch, match=r"test-model \(8 dimensions\)"):
        vectors.check_pin(conn, brain.brain_id, None, 384)
    vectors.check_pin(conn, brain.brain_id, "test-model:latest", 8)  # same model


def test_sync_follows_forget_restore_purge(brain: Brain) -> None:
    rowid = store(brain, "one", unit(1, 0))
    trace_id = brain.list_ids(brain_filter())[0]
    conn = brain.db.conn
    brain.forget(trace_id)
    with brain.write("sync"):
        vectors.sync_rows(conn, brain.brain_id, [rowid])
    assert vec_rowids(brain) == []
    brain.restore(trace_id)
    with brain.write("sync"):
        vectors.sync_rows(conn, brain.brain_id, [rowid])
    assert vec_rowids(brain) == [rowid]
    brain.purge(trace_id)
    with brain.write("sync"):
        vectors.sync_rows(conn, brain.brain_id, [rowid])
    assert vec_rowids(brain) == []


def log_rows(brain: Brain) -> list[int]:
    rows = brain.db.conn.execute(f"SELECT trace_rowid FROM {vectors.LOG_TABLE} ORDER BY seq")
    return [r[0] for r in rows]


def test_forget_logs_only_a_trace_with_a_vector(brain: Brain) -> None:
    embedded = store(brain, "one", unit(1, 0))
    kept = store(brain, "kept", unit(0, 1))
    plain = brain.add("never embedded")
    vector_cache.rank(brain.db.conn, brain.brain_id, unit(1, 0), 5)  # the matrix, loaded
    before = log_rows(brain)
    brain.forget(plain.id)  # no vector in any index or cache: nothing for them to replay
    assert log_rows(brain) == before
    embedded_id = brain.db.conn.execute(
        "SELECT id FROM memory_traces WHERE rowid = ?", (embedded,)
    ).get
    brain.forget(embedded_id)
    assert log_rows(brain) == [*before, embedded]
    assert vec_rowids(brain) == [kept]
    # The cached matrix, loaded before the forgets, catches up through the log.
    entry = vector_cache.refresh(brain.db.conn, brain.brain_id, 8)
    assert not entry.alive[entry.position[embedded]] and entry.alive[entry.position[kept]]
    ranked = vector_cache.rank(brain.db.conn, brain.brain_id, unit(1, 1), 5)
    kept_id = brain.db.conn.execute("SELECT id FROM memory_traces WHERE rowid = ?", (kept,)).get
    assert [hit[0] for hit in ranked] == [kept_id]


def test_content_change_leaves_the_index(brain: Brain) -> None:
    rowid = store(brain, "one", unit(1, 0))
    trace_id = brain.list_ids(brain_filter())[0]
    brain.update(trace_id, {"content": "changed"})
    with brain.write("sync"):
        vectors.sync_rows(brain.db.conn, brain.brain_id, [rowid])
    assert vec_rowids(brain) == []
    assert vector_cache.rank(brain.db.conn, brain.brain_id, unit(1, 0), 5) == []


def test_foreign_dimension_blob_becomes_pending(brain: Brain) -> None:
    store(brain, "one", unit(1, 0))
    other = brain.add("imported")
    conn = brain.db.conn
    with brain.write("import"):
        conn.execute(
            "UPDATE memory_traces SET embedding = ?, embedding_status = 1 WHERE rowid = ?",
            (pack_vector(np.ones(3)), other.rowid),
        )
        vectors.sync_rows(conn, brain.brain_id, [other.rowid])
    status = conn.execute(
        "SELECT embedding_status FROM memory_traces WHERE rowid = ?", (other.rowid,)
    ).fetchone()[0]
    assert status == 0 and other.rowid not in vec_rowids(brain)


def test_reindex_rebuilds_from_blobs_and_reads_legacy_json(brain: Brain) -> None:
    first = store(brain, "one", unit(1, 0))
    second = brain.add("legacy").rowid
    conn = brain.db.conn
    with brain.write("legacy"):
        legacy = "[" + ", ".join(str(x) for x in unit(0, 1).tolist()) + "]"
        conn.execute(
            "UPDATE memory_traces SET embedding = ?, embedding_status = 1 WHERE rowid = ?",
            (legacy.encode(), second),
        )
        conn.execute(f"DELETE FROM {vectors.VEC_TABLE}")
    with brain.write("reindex"):
        job = vectors.reindex(conn, brain.brain_id)
        events = []
        try:
            while True:
                events.append(next(job))
        except StopIteration as stop:
            indexed = stop.value
    assert indexed == 2 and vec_rowids(brain) == [first, second]
    assert events[-1].done == events[-1].total == 2
    hits = vectors.knn_vec0(conn, brain.brain_id, unit(0, 1), 1)
    second_id = conn.execute("SELECT id FROM memory_traces WHERE rowid = ?", (second,)).fetchone()
    assert hits[0][0] == second_id[0] and hits[0][1] == pytest.approx(0.0, abs=1e-6)
    assert unpack_vector(legacy.encode()).shape == (8,)


def test_matrix_rank_matches_vec0_and_filters_before_the_cut(brain: Brain) -> None:
    rng = np.random.default_rng(7)
    rowids = [store(brain, f"trace {i}", rng.normal(size=8).astype(np.float32)) for i in range(60)]
    conn = brain.db.conn
    query = rng.normal(size=8).astype(np.float32)
    by_matrix = vector_cache.rank(conn, brain.brain_id, query, 10)
    by_vec0 = vectors.knn_vec0(conn, brain.brain_id, query, 10)
    positive = [tid for tid, dist in by_vec0 if dist < 1.0]
    assert [tid for tid, _ in by_matrix] == positive[: len(by_matrix)]
    # One trace far down the ranking is the only one passing the filter: still found.
    last = vector_cache.rank(conn, brain.brain_id, query, 60)[-1][0]
    where, params = "t.id = ?", [last]
    assert [tid for tid, _ in vector_cache.rank(conn, brain.brain_id, query, 1, where, params)] == [
        last
    ]
    assert len(rowids) == 60


def test_matrix_catches_up_with_writes_of_another_connection(brain: Brain, tmp_path: Path) -> None:
    store(brain, "one", unit(1, 0))
    conn = brain.db.conn
    assert [t for t, _ in vector_cache.rank(conn, brain.brain_id, unit(0, 1), 5)] == []
    other = Brain.open(tmp_path / "brain.sqlite")
    try:
        new_rowid = store(other, "two", unit(0, 1))
    finally:
        other.close()
    hits = vector_cache.rank(conn, brain.brain_id, unit(0, 1), 5)
    row = conn.execute("SELECT id FROM memory_traces WHERE rowid = ?", (new_rowid,)).fetchone()
    assert [t for t, _ in hits] == [row[0]]


def test_filter_checks_look_traces_up_by_rowid(brain: Brain) -> None:
    # Given `brain_id = ?` next to a list of rowids, SQLite's planner can prefer a brain_id
    # index and walk the whole brain; the matrix's checks must look rows up by rowid.
    rng = np.random.default_rng(3)
    for i in range(40):
        store(brain, f"trace {i}", rng.normal(size=8).astype(np.float32))
    conn = brain.db.conn
    statements: list[tuple[str, tuple]] = []

    def remember(_cursor, sql: str, bindings) -> bool:
        if "rowid IN" in sql:
            statements.append((sql, tuple(bindings or ())))
        return True

    conn.exec_trace = remember
    try:
        where, params = "t.deleted = 0 AND t.type = ?", ["episodic"]
        query = rng.normal(size=8).astype(np.float32)
        assert vector_cache.rank(conn, brain.brain_id, query, 5, where, params)
    finally:
        conn.exec_trace = None
    assert statements
    for sql, bindings in statements:
        plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", bindings)]
        assert all("INTEGER PRIMARY KEY" in step for step in plan), (sql, plan)


def test_a_connection_opened_before_the_first_vector_keeps_the_index_in_step(
    tmp_path: Path,
) -> None:
    # Opening a file without a vector index does not load sqlite-vec; a connection opened
    # then must still edit and purge once another one has created the index.
    path = tmp_path / "shared.sqlite"
    with Brain.open(path) as setup:
        edited, purged = setup.add("edited later"), setup.add("purged later")
    early = Brain.open(path)
    try:
        with Brain.open(path) as other:
            for trace in (edited, purged):
                with other.write("embed"):
                    vectors.pin_model(other.db.conn, other.brain_id, "test-model", 8)
                    vectors.write_embedding(other.db.conn, other.brain_id, trace.rowid, unit(1))
            assert vec_rowids(other) == [edited.rowid, purged.rowid]
        early.update(edited.id, {"content": "edited now"})
        early.purge(purged.id)
        assert vec_rowids(early) == []
    finally:
        early.close()
