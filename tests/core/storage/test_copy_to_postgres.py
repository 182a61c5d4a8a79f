"""`copy_brain`: a brain file into PostgreSQL, row for row, in one transaction."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import apsw
import psycopg
import pytest

from memgui.core.brain import Brain
from memgui.core.engines import copy_brain
from memgui.core.errors import InvalidArgument
from memgui.core.model import TraceFilter
from memgui.core.progress import Progress, run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import parse_postgres_address
from memgui.core.storage.store import select_columns
from tests.support.brain_rows import linked_brain

pytestmark = pytest.mark.slow  # a real server

NOW = 1_800_000_000_000


def _sqlite_rows(path: Path, brain_id: str) -> dict[str, str]:
    """A hash of each trace's row as memgui reads it, and of its embedding."""
    brain = Brain.open(path, brain_id, create=False)
    try:
        columns = select_columns(brain.db).split(", ", 1)[1]  # no rowid
        rows = brain.db.conn.execute(
            f"SELECT {columns}, embedding FROM memory_traces WHERE brain_id = ?", (brain_id,)
        ).fetchall()
    finally:
        brain.close()
    return {row[0]: hashlib.sha256(repr(tuple(row)).encode()).hexdigest() for row in rows}


def _postgres_rows(address: str) -> dict[str, str]:
    parsed = parse_postgres_address(address)
    columns = (
        "id, type, scope, scope_id, content, strength, created_at, last_accessed, "
        "retrieval_count, tags, emotions, metadata, deleted, expires_at, category, version, "
        "updated_at, embedding_status, embedding"
    )
    with psycopg.connect(parsed.conninfo) as conn:
        rows = conn.execute(
            f"SELECT {columns} FROM memory_traces WHERE brain_id = %s", (parsed.brain_id,)
        ).fetchall()
    return {
        row[0]: hashlib.sha256(
            repr(tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)).encode()
        ).hexdigest()
        for row in rows
    }


def _same_traces(path: Path, brain_id: str, address: str) -> None:
    """Every trace reads the same through both engines (rowid aside: Postgres has none)."""
    with Brain.open(path, brain_id, create=False) as file_brain, SharedBrain.open(address) as pg:
        file_brain.clock = pg.clock = lambda: NOW
        everything = TraceFilter(include_deleted=True)
        ids = [t.id for t in file_brain.list_traces(everything, limit=200)]
        assert ids and ids == [t.id for t in pg.list_traces(everything, limit=200)]
        for trace_id in ids:
            assert dataclasses.replace(file_brain.get(trace_id), rowid=0) == pg.get(trace_id)


def test_the_agentos_brain_copies_row_for_row(agentos_copy: Path, pg_address: str) -> None:
    seen: list[Progress] = []
    copied = run_to_end(copy_brain(agentos_copy, pg_address), seen.append)
    source = _sqlite_rows(agentos_copy, "brain")
    assert copied == len(source) == 51
    assert _postgres_rows(pg_address) == source  # embeddings' bytes included
    assert seen[-1].done == seen[-1].total == 51
    # The AgentOS brain was read, never written (not even migrated).
    assert _sqlite_rows(agentos_copy, "brain") == source
    _same_traces(agentos_copy, "brain", pg_address)


def test_a_memgui_brain_copies_with_its_links_journal_and_history(
    tmp_path: Path, pg_address: str
) -> None:
    path = tmp_path / "brain.sqlite"
    a, b, edit = linked_brain(path)
    run_to_end(copy_brain(path, pg_address))
    assert _postgres_rows(pg_address) == _sqlite_rows(path, "team")
    _same_traces(path, "team", pg_address)
    parsed = parse_postgres_address(pg_address)
    with psycopg.connect(parsed.conninfo) as conn:
        links = conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()
    assert links == [tuple(sorted((a.id, b.id))) + ("relates_to",)]
    with Brain.open(path, "team") as file_brain, SharedBrain.open(pg_address) as pg:
        # A link row is filed under one of its traces: each finds it in its history.
        for trace_id, ops in ((a.id, ["add", "link", "update"]), (b.id, ["add", "link", "forget"])):
            file_history = [dataclasses.replace(e, id=0) for e in file_brain.history(trace_id)]
            assert [dataclasses.replace(e, id=0) for e in pg.history(trace_id)] == file_history
            assert [e.op for e in file_history] == ops
    with SharedBrain.open(pg_address) as pg:
        assert edit.changes is not None
        pg.revert(edit.changes.batch_id)  # a batch made in the file reverts in Postgres
        assert pg.get(a.id).content == "first memory about deployments"
        assert [h.trace.id for h in pg.search("deployments").hits] == [a.id]


def test_a_brain_that_holds_traces_is_never_copied_into(tmp_path: Path, pg_address: str) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, "team") as brain:
        brain.add("from the file")
    with SharedBrain.open(pg_address) as pg:
        kept = pg.add("already there")
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(path, pg_address))
    assert caught.value.field == "destination" and "already holds 1 traces" in str(caught.value)
    with SharedBrain.open(pg_address) as pg:
        assert [t.id for t in pg.list_traces()] == [kept.id]


def test_a_row_postgres_refuses_leaves_nothing_copied(tmp_path: Path, pg_address: str) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, "team") as brain:
        for n in range(3):
            brain.add(f"memory {n}")
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE memory_traces SET content = 'nul' || char(0) || 'here' WHERE rowid = 3")
    conn.close()
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(path, pg_address))
    assert caught.value.field == "source" and "nothing was copied" in str(caught.value)
    with SharedBrain.open(pg_address) as pg:
        assert pg.count(TraceFilter(include_deleted=True)) == 0


def test_bad_addresses_are_refused_before_anything_opens(tmp_path: Path, pg_address: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(tmp_path / "missing.sqlite", pg_address))
    assert caught.value.field == "source"
    assert not (tmp_path / "missing.sqlite").exists()
    with pytest.raises(InvalidArgument) as caught:
        run_to_end(copy_brain(tmp_path / "a.sqlite", str(tmp_path / "b.sqlite")))
    assert caught.value.field == "destination"
    with pytest.raises(InvalidArgument) as caught:  # Postgres to Postgres: not a copy here
        run_to_end(copy_brain(pg_address, pg_address))
    assert caught.value.field == "destination"


def test_the_agentos_graph_documents_and_logs_copy_and_take_new_rows(
    agentos_copy: Path, pg_address: str
) -> None:
    """AgentOS's other tables arrive whole, and its next log row gets a fresh id: the
    identity's sequence moved past the copied ids."""
    run_to_end(copy_brain(agentos_copy, pg_address))
    with apsw.Connection(str(agentos_copy)) as file_conn:
        in_file = {
            table: file_conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("knowledge_nodes", "knowledge_edges", "conversations", "messages")
        }
        top_log = file_conn.execute("SELECT max(id) FROM retrieval_feedback").fetchone()[0]
    conninfo = parse_postgres_address(pg_address).conninfo
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table, count in in_file.items():
            row = conn.execute(f"SELECT count(*) FROM {table} WHERE brain_id = 'team'").fetchone()
            assert row is not None and row[0] == count > 0, table
        new = conn.execute(
            "INSERT INTO retrieval_feedback (brain_id, trace_id, signal, created_at) "
            "SELECT 'team', id, 'used', 1 FROM memory_traces WHERE brain_id = 'team' "
            "LIMIT 1 RETURNING id"
        ).fetchone()
        assert new is not None and new[0] > top_log


def test_a_purge_lets_go_of_the_chunks_and_feedback_naming_the_trace_and_reverts(
    agentos_copy: Path, pg_address: str
) -> None:
    """AgentOS's chunk and feedback rows hold a foreign key to their trace: a purge on the
    server lets them go as a file does (the chunk forgets its trace, the feedback goes),
    journaled, and its revert puts them back as they were."""
    with apsw.Connection(str(agentos_copy)) as file_conn:
        chunk_id, chunk_trace = file_conn.execute(
            "SELECT id, trace_id FROM document_chunks WHERE trace_id IS NOT NULL LIMIT 1"
        ).fetchone()
        feedback_id, feedback_trace = file_conn.execute(
            "SELECT id, trace_id FROM retrieval_feedback LIMIT 1"
        ).fetchone()
    run_to_end(copy_brain(agentos_copy, pg_address))
    conninfo = parse_postgres_address(pg_address).conninfo

    def rows() -> tuple[object, object]:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            chunk = conn.execute(
                "SELECT trace_id FROM document_chunks WHERE id = %s", (chunk_id,)
            ).fetchone()
            feedback = conn.execute(
                "SELECT trace_id FROM retrieval_feedback WHERE id = %s", (feedback_id,)
            ).fetchone()
        return chunk, feedback

    with SharedBrain.open(pg_address) as brain:
        gone = [brain.purge(chunk_trace), brain.purge(feedback_trace)]
        assert rows() == ((None,), None)
        for changes in reversed(gone):
            brain.revert(changes.batch_id)
        assert rows() == ((chunk_trace,), (feedback_trace,))
