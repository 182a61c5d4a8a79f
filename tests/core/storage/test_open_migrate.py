"""Opening brains: AgentOS brains as they are, migration on first write, backups, refusals."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import (
    BrainIdRequired,
    Conflict,
    InvalidArgument,
    MigrationError,
    NotFound,
    ReadOnlyBrain,
    SchemaTooNew,
)
from memgui.core.model import TraceFilter
from memgui.core.storage import schema


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_agentos_brain_opens_with_everything_and_is_not_written(agentos_copy: Path) -> None:
    before = digest(agentos_copy)
    with Brain.open(agentos_copy) as brain:
        assert brain.brain_id == "brain"
        everything = brain.list_traces(TraceFilter(include_deleted=True))
        assert len(everything) == 51
        assert len(brain.list_traces()) == 45
        assert brain.info()["schema_version"] == 0
        by_scope = {t.scope_id for t in everything}
        assert {"thread-001", "user-42", "org-acme"} <= by_scope
        tagged = [t for t in everything if t.tags]
        assert tagged and all(isinstance(tag, str) for t in tagged for tag in t.tags)
        assert any(t.metadata.get("content_hash") for t in everything)
        assert sum(t.embedding_status for t in everything) == 4
        # What search by meaning would find: AgentOS's pin and the live traces without one.
        assert brain.embedding_info() == {"model": None, "dimensions": 1536, "pending": 41}
        assert brain.search("dark mode", record_recall=False).traces
        assert brain.history(everything[0].id) == []
    assert digest(agentos_copy) == before
    assert sorted(os.listdir(agentos_copy.parent)) == ["brain.sqlite"]


def trace_rows(path: Path) -> list[tuple]:
    conn = apsw.Connection(
        f"{path.resolve().as_uri()}?immutable=1",
        flags=apsw.SQLITE_OPEN_URI | apsw.SQLITE_OPEN_READONLY,
    )
    try:
        return conn.execute("SELECT * FROM memory_traces ORDER BY brain_id, id").fetchall()
    finally:
        conn.close()


def test_first_write_migrates_after_a_backup(agentos_copy: Path) -> None:
    original = trace_rows(agentos_copy)
    with Brain.open(agentos_copy) as brain:
        brain.add("memgui was here", scope="user", scope_id="user-42")
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION
        backups = list(
            agentos_copy.parent.glob(f"brain.sqlite.backup-pre-{schema.SCHEMA_VERSION}-*")
        )
        assert len(backups) == 1
        # scope ids moved from metadata into the column; old traces searchable in every index
        assert brain.count(TraceFilter(scope_id="user-42")) >= 2
        assert brain.search("dark mode", record_recall=False).traces
    backup = backups[0]
    with Brain.open(backup) as old:
        assert old.info()["schema_version"] == 0 and old.info()["traces"] == 51
    # The backup holds the brain exactly as it was before the migration and the write.
    assert trace_rows(backup) == original and len(original) == 51


def test_backup_failure_migrates_nothing(agentos_copy: Path) -> None:
    folder = agentos_copy.parent
    with Brain.open(agentos_copy) as brain:
        blocker = brain.db.backup_path(schema.SCHEMA_VERSION)
        blocker.mkdir()  # a folder where the backup file must go: os.replace fails
        (blocker / "keep").write_text("x")
        with pytest.raises(MigrationError, match="cannot write the backup .* nothing was migrated"):
            brain.add("never written")
        assert brain.info()["schema_version"] == 0
    with Brain.open(agentos_copy) as again:
        assert again.info()["traces"] == 51
        assert "version" not in again.db.trace_columns
    assert not list(folder.glob("*.tmp-*"))


def test_a_refused_first_write_leaves_the_file_as_it_was(agentos_copy: Path) -> None:
    before, original = digest(agentos_copy), trace_rows(agentos_copy)
    with Brain.open(agentos_copy) as brain:
        some = brain.list_traces()[0].id
        refusals = [
            (NotFound, lambda: brain.update("mt_nope", {"content": "x"})),
            (Conflict, lambda: brain.update(some, {"content": "x"}, expect_version=5)),
            (InvalidArgument, lambda: brain.link(some, some, "relates_to")),
            (NotFound, lambda: brain.link(some, "mt_nope", "relates_to")),
            (NotFound, lambda: brain.merge([some, "mt_nope"])),
            (NotFound, lambda: brain.forget("mt_nope")),
        ]
        for error, refused in refusals:
            with pytest.raises(error):
                refused()
            assert brain.info()["schema_version"] == 0
            assert "version" not in brain.db.trace_columns
        assert digest(agentos_copy) == before
        assert not list(agentos_copy.parent.glob("*backup*"))  # nor its temporary file
        # The version a caller reads before the migration is the one it may pass back.
        seen = brain.get(some).version
        brain.update(some, {"content": "edited"}, expect_version=seen)
        assert brain.get(some).version == seen + 1
    backups = list(agentos_copy.parent.glob(f"brain.sqlite.backup-pre-{schema.SCHEMA_VERSION}-*"))
    assert len(backups) == 1 and trace_rows(backups[0]) == original
    assert not list(agentos_copy.parent.glob("*.tmp-*"))


def test_a_brain_newer_than_the_code_is_refused_untouched(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        brain.add("x")
        brain.db.conn.execute(
            "UPDATE brain_meta SET value = '99' WHERE key = ?", (schema.SCHEMA_KEY,)
        )
    before = digest(brain_path)
    with pytest.raises(SchemaTooNew) as err:
        Brain.open(brain_path)
    assert "99" in str(err.value) and str(schema.SCHEMA_VERSION) in str(err.value)
    assert digest(brain_path) == before


def test_new_file_uses_its_stem_as_brain_id(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "notes.sqlite") as brain:
        assert brain.brain_id == "notes"
        brain.add("x")
        mode = brain.db.conn.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
        assert brain.db.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_several_brain_ids_need_a_choice(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    with Brain.open(path, brain_id="alpha") as a:
        a.add("alpha's")
    with Brain.open(path, brain_id="alpha") as a:
        a.db.conn.execute(
            "INSERT INTO brain_meta(brain_id, key, value) VALUES ('beta', 'schema_version', '2')"
        )
    with pytest.raises(BrainIdRequired) as err:
        Brain.open(path)
    assert "alpha, beta" in str(err.value) and "--brain-id" in str(err.value)
    with Brain.open(path, brain_id="beta") as b:
        assert b.count() == 0
    with pytest.raises(BrainIdRequired, match="holds no brain 'gamma'"):
        Brain.open(path, brain_id="gamma")


def test_read_only_file_can_be_browsed(agentos_copy: Path, monkeypatch) -> None:
    # As root every file is writable, so say "not writable" the way read-only media would.
    real_access = os.access
    monkeypatch.setattr(
        "memgui.core.storage.db.os.access",
        lambda p, mode: False if mode == os.W_OK else real_access(p, mode),
    )
    before = digest(agentos_copy)
    with Brain.open(agentos_copy) as brain:
        assert brain.db.readonly
        assert brain.count() == 45
        with pytest.raises(ReadOnlyBrain, match="is read-only; it cannot be migrated or written"):
            brain.add("nope")
        assert brain.search("dark mode").traces  # answered; no recall noted
    assert digest(agentos_copy) == before


def test_a_file_without_write_bits_is_opened_read_only(agentos_copy: Path) -> None:
    agentos_copy.chmod(0o444)
    try:
        with Brain.open(agentos_copy) as brain:
            assert brain.db.readonly and brain.count() == 45
        assert sorted(p.name for p in agentos_copy.parent.iterdir()) == ["brain.sqlite"]
    finally:
        agentos_copy.chmod(0o644)


def test_rerun_replaces_an_earlier_backup_whole(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        stale = brain.db.backup_path(schema.SCHEMA_VERSION)
        stale.write_bytes(b"not a database")
        brain.add("x")
    conn = apsw.Connection(str(stale))
    assert conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0] == 51
    conn.close()


def test_export_sqlite_in_rollback_mode_opens(tmp_path: Path) -> None:
    from tests.support.paths import AGENTOS

    copy = tmp_path / "export.sqlite"
    shutil.copyfile(AGENTOS / "export.sqlite", copy)
    before = digest(copy)
    with Brain.open(copy, brain_id="brain") as brain:
        assert brain.count(TraceFilter(include_deleted=True)) == 51
    assert digest(copy) == before


def test_a_new_brain_needs_no_backup(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "fresh.sqlite") as brain:
        brain.add("first")
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION
    assert sorted(p.name for p in tmp_path.iterdir() if "backup" in p.name) == []


def test_an_open_brain_sees_the_migration_another_connection_made(agentos_copy: Path) -> None:
    # The app opened on an AgentOS brain, then an agent's first write migrates it.
    with Brain.open(agentos_copy) as window:
        trace_id = window.list_traces()[0].id
        assert window.get(trace_id).version == 1 and window.last_journal_id() == 0
        with Brain.open(agentos_copy) as agent:
            agent.update(trace_id, {"content": "edited by the agent", "category": "DECISION"})
        seen = window.get(trace_id)
        assert (seen.content, seen.version, seen.category) == (
            "edited by the agent",
            2,
            "DECISION",
        )
        assert window.db.is_current and window.info()["schema_version"] == schema.SCHEMA_VERSION
        assert [e.op for e in window.history(trace_id)] == ["update"]
        assert window.last_journal_id() > 0
        assert [t.id for t in window.list_traces(TraceFilter(category="DECISION"))] == [trace_id]
        assert window.search("edited agent", record_recall=False).traces[0].id == trace_id
        window.update(trace_id, {"tags": ["seen"]}, expect_version=2)  # its own write now
