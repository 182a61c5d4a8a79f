"""Importing into a shared brain: every reader's format planned, committed, re-planned as
duplicates and reverted on PostgreSQL, with what a file's import writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import apsw
import psycopg
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.writing.commit import commit
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_import import SharedImport
from memgui.core.storage.engine import BrainStore, parse_postgres_address
from memgui.core.storage.postgres_tables import TABLES
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # a real server

AGENTOS = ROOT.parent / "shared" / "fixtures" / "agentos"
EVERYTHING = TraceFilter(include_deleted=True)


def _jsonl(_: Path) -> Path:
    """The project's agent-memory JSONL fixture."""
    return ROOT / "tests" / "fixtures" / "jsonl" / "valid.jsonl"


def _gsd(tmp_path: Path) -> Path:
    state = tmp_path / "project" / ".planning" / "STATE.md"
    state.parent.mkdir(parents=True)
    state.write_text("# State\n\n## Decisions\n\n- Use SQLite\n", encoding="utf-8")
    return state


SOURCES: list[tuple[str, Any]] = [
    ("json", lambda _: AGENTOS / "export-embeddings.json"),
    ("sqlite", lambda _: AGENTOS / "brain.sqlite"),
    ("markdown", lambda _: AGENTOS / "markdown"),
    ("obsidian", lambda _: AGENTOS / "obsidian"),
    ("csv", lambda _: AGENTOS / "csv-input.csv"),
    ("chatgpt", lambda _: AGENTOS / "chatgpt-input.json"),
    ("jsonl", _jsonl),
    ("gsd", _gsd),
]


def _contents(store: BrainStore) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return sorted(
        (t.content, t.type, t.scope, t.tags) for t in store.list_traces(EVERYTHING, limit=200)
    )


def _other_rows(address: str) -> dict[str, int]:
    with psycopg.connect(parse_postgres_address(address).conninfo) as conn:
        return {
            t.name: conn.execute(
                f"SELECT count(*) FROM {t.name} WHERE brain_id = 'team'"
            ).fetchone()[0]  # type: ignore[index]
            for t in TABLES
        }


def _file_rows(brain: Brain) -> dict[str, int]:
    return {
        t.name: brain.db.conn.execute(
            f"SELECT count(*) FROM {t.name} WHERE brain_id = 'team'"
        ).fetchone()[0]
        for t in TABLES
    }


@pytest.mark.parametrize(("fmt", "make"), SOURCES, ids=[fmt for fmt, _ in SOURCES])
def test_every_format_imports_into_a_shared_brain_as_into_a_file(
    fmt: str, make: Any, tmp_path: Path, pg_address: str
) -> None:
    source = make(tmp_path)
    with Brain.open(tmp_path / "file.sqlite", "team") as file_brain:
        file_plan = run_to_end(plan(file_brain, source, fmt, ImportOptions()))
        file_result = run_to_end(commit(file_brain, file_plan))
        expected, expected_rows = _contents(file_brain), _file_rows(file_brain)
    assert file_result.imported > 0
    with SharedBrain.open(pg_address) as shared, SharedImport(shared) as job:
        kept = shared.add("already in the shared brain")
        the_plan = run_to_end(job.plan(source, fmt, ImportOptions()))
        assert the_plan.counts == file_plan.counts
        result = run_to_end(job.commit(the_plan))
        assert (result.imported, result.skipped, result.refused) == (
            file_result.imported,
            file_result.skipped,
            file_result.refused,
        )
        assert result.batch_id is not None and result.changes is not None
        assert file_result.changes is not None
        assert len(result.changes.added) == len(file_result.changes.added) > 0
        assert _contents(shared) == sorted([*expected, (kept.content, "episodic", "user", ())])
        assert _other_rows(pg_address) == expected_rows
        again = run_to_end(job.plan(source, fmt, ImportOptions()))
        assert again.counts["new"] == 0 and again.counts["update"] == 0
        shared.revert(result.batch_id)
        assert [t.id for t in shared.list_traces(EVERYTHING)] == [kept.id]
        assert set(_other_rows(pg_address).values()) == {0}


def test_embeddings_come_with_a_json_import(tmp_path: Path, pg_address: str) -> None:
    with SharedBrain.open(pg_address) as shared, SharedImport(shared) as job:
        the_plan = run_to_end(job.plan(AGENTOS / "export-embeddings.json"))
        run_to_end(job.commit(the_plan))
        assert shared.embedding_info()["dimensions"] is not None
        assert shared.embedding_info()["pending"] < shared.count()


def test_a_trace_changed_on_the_server_since_the_plan_stops_the_import(
    agentos_copy: Path, tmp_path: Path, pg_address: str
) -> None:
    """A re-import whose trace brings a tag plans an update; a person's edit on the server
    between the plan and the commit makes the commit a conflict that writes nothing."""
    with apsw.Connection(str(agentos_copy)) as conn:
        trace_id, tags = conn.execute(
            "SELECT id, tags FROM memory_traces WHERE deleted = 0 ORDER BY id LIMIT 1"
        ).fetchone()
    with SharedBrain.open(pg_address) as shared, SharedImport(shared) as job:
        run_to_end(job.commit(run_to_end(job.plan(agentos_copy, "sqlite"))))
        with apsw.Connection(str(agentos_copy)) as conn:
            conn.execute(
                "UPDATE memory_traces SET tags = ? WHERE id = ?",
                (json.dumps([*json.loads(tags), "brought-later"]), trace_id),
            )
        the_plan = run_to_end(job.plan(agentos_copy, "sqlite"))
        assert the_plan.counts["update"] == 1
        edited = shared.update(trace_id, {"content": "edited on the server"})
        count = shared.count(EVERYTHING)
        with pytest.raises(Conflict, match="changed on the server since the import"):
            run_to_end(job.commit(the_plan))
        with pytest.raises(InvalidArgument, match="plan"):  # the staged file was dropped
            run_to_end(job.commit(the_plan))
        after = shared.get(trace_id)
        assert (after.content, after.version) == ("edited on the server", edited.version)
        assert "brought-later" not in after.tags and shared.count(EVERYTHING) == count
        # Planned again against the brain as it is now: the text the server no longer holds
        # is a new trace, and goes in.
        fresh = run_to_end(job.plan(agentos_copy, "sqlite"))
        assert fresh.counts["new"] == 1 and fresh.counts["update"] == 0
        assert run_to_end(job.commit(fresh)).imported == 1
        assert shared.count(EVERYTHING) == count + 1


def test_an_update_the_import_plans_lands_and_reverts(agentos_copy: Path, pg_address: str) -> None:
    with apsw.Connection(str(agentos_copy)) as conn:
        trace_id, tags = conn.execute(
            "SELECT id, tags FROM memory_traces WHERE deleted = 0 ORDER BY id LIMIT 1"
        ).fetchone()
    with SharedBrain.open(pg_address) as shared, SharedImport(shared) as job:
        run_to_end(job.commit(run_to_end(job.plan(agentos_copy, "sqlite"))))
        before = shared.get(trace_id)
        with apsw.Connection(str(agentos_copy)) as conn:
            conn.execute(
                "UPDATE memory_traces SET tags = ? WHERE id = ?",
                (json.dumps([*json.loads(tags), "brought-later"]), trace_id),
            )
        result = run_to_end(job.commit(run_to_end(job.plan(agentos_copy, "sqlite"))))
        assert result.updated == 1 and result.batch_id is not None
        updated = shared.get(trace_id)
        assert "brought-later" in updated.tags and updated.version == before.version + 1
        assert [h.trace.id for h in shared.search("brought-later", mode="keyword").hits] == [
            trace_id
        ]
        shared.revert(result.batch_id)
        assert shared.get(trace_id).tags == before.tags
