"""Another program (an AgentOS agent) writing a brain memgui has migrated: its rows reach
memgui's own index and scope id column, as AgentOS writes them (plain SQL, its own index
kept by hand, no memgui code)."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import NotFound
from memgui.core.model import TraceFilter
from memgui.core.search import fulltext
from memgui.core.storage import schema


def agentos(path: Path) -> apsw.Connection:
    """A connection as AgentOS's: nothing of memgui's registered on it."""
    conn = apsw.Connection(str(path))
    conn.setbusytimeout(5000)
    return conn


def agentos_add(conn: apsw.Connection, trace_id: str, content: str, scope_id: str) -> None:
    meta = json.dumps({"scopeId": scope_id})
    conn.execute(
        "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at, tags, "
        "metadata) VALUES ('brain', ?, 'semantic', 'user', ?, 1, '[]', ?)",
        (trace_id, content, meta),
    )
    rowid = conn.last_insert_rowid()
    conn.execute(
        "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, '[]')", (rowid, content)
    )


def agentos_set_content(conn: apsw.Connection, trace_id: str, content: str) -> None:
    rowid, old = conn.execute(
        "SELECT rowid, content FROM memory_traces WHERE id = ?", (trace_id,)
    ).fetchone()
    conn.execute(
        "INSERT INTO memory_traces_fts(memory_traces_fts, rowid, content, tags) "
        "VALUES ('delete', ?, ?, '[]')",
        (rowid, old),
    )
    conn.execute("UPDATE memory_traces SET content = ? WHERE id = ?", (content, trace_id))
    conn.execute(
        "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, '[]')", (rowid, content)
    )


def assert_index_holds_each_row_once(brain: Brain) -> None:
    """memgui_fts has an entry per row, none left of a row another program took away."""
    rows = brain.db.conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0]
    assert fulltext.indexed_rows(brain.db, "memgui_fts") == rows


def found(brain: Brain, query: str) -> list[str]:
    return [t.id for t in brain.search(query, record_recall=False).traces]


@pytest.fixture
def migrated(brain_path: Path) -> Path:
    with Brain.open(brain_path, actor="test") as brain:
        brain.add("memgui's own note about pomegranates", scope_id="user-42")
    return brain_path


def test_another_programs_rows_are_searched_as_they_are_now(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        conn = agentos(migrated)
        agentos_add(conn, "mt_a", "Quasarfig orchard added by an agent", "user-42")
        agentos_add(conn, "mt_b", "The user lives in Kreuzberg", "user-42")
        agentos_set_content(conn, "mt_b", "The user moved to Wibbleflux")
        conn.execute("DELETE FROM memory_traces WHERE id = 'mt_a'")
        agentos_add(conn, "mt_c", "Snorkelberry remembered", "user-42")
        assert found(brain, "Wibbleflux") == ["mt_b"]
        assert found(brain, "Kreuzberg") == []
        assert found(brain, "Quasarfig") == []
        assert found(brain, "Snorkelberry") == ["mt_c"]
        assert found(brain, "pomegranates")
        # memgui then edits an agent's row: both indexes follow, AgentOS's included.
        brain.update("mt_c", {"content": "Snorkelberry and damson"})
        brain.flush_index()
        assert found(brain, "damson") == ["mt_c"]
        agentos_hits = conn.execute(
            "SELECT count(*) FROM memory_traces_fts WHERE memory_traces_fts MATCH 'damson'"
        ).fetchone()[0]
        assert agentos_hits == 1
        integrity = "INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('integrity-check')"
        conn.execute(integrity)  # raises if AgentOS's index no longer matches its rows
        conn.close()


def test_another_programs_rows_get_their_scope_id(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        conn = agentos(migrated)
        agentos_add(conn, "mt_a", "an agent's note", "user-42")
        scoped = {t.id for t in brain.list_traces(TraceFilter(scope="user", scope_id="user-42"))}
        assert "mt_a" in scoped
        brain.update("mt_a", {"tags": ["orchard"]})
        meta = json.loads(
            conn.execute("SELECT metadata FROM memory_traces WHERE id = 'mt_a'").fetchone()[0]
        )
        assert meta["scopeId"] == "user-42"  # an edit keeps what AgentOS files it under
        conn.execute(
            "UPDATE memory_traces SET metadata = ? WHERE id = 'mt_a'",
            (json.dumps({"scopeId": "user-43"}),),
        )
        assert brain.get("mt_a").scope_id == "user-43"
        assert brain.delete_scope("user", "user-43").count == 1
        conn.close()


def test_memguis_own_writes_leave_no_foreign_marks(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        with brain.batch():
            for n in range(5):
                brain.add(f"note {n}")
        kinds = brain.db.conn.execute("SELECT DISTINCT indexed FROM memgui_fts_pending").fetchall()
        assert fulltext.FOREIGN not in {k[0] for k in kinds}
        brain.flush_index()
        first, second = brain.list_ids()[:2]
        brain.update(first, {"content": "edited by memgui"})
        brain.purge(second)
        brain.flush_index()
        shared = brain.db.conn.execute(
            "SELECT count(*) FROM brain_meta WHERE key = ?", (schema.SHARED_KEY,)
        ).fetchone()[0]
        assert shared == 0  # none of memgui's own writes looked like another program's


def back_to_schema_1(brain: Brain) -> None:
    """The brain as memgui's schema 1 left it: no triggers, version 1 in its meta rows."""
    for name in schema.MEMGUI_TRIGGER_NAMES:
        brain.db.conn.execute(f"DROP TRIGGER {name}")
    brain.db.conn.execute("UPDATE brain_meta SET value = '1' WHERE key = ?", (schema.SCHEMA_KEY,))


def test_a_brain_of_schema_1_gets_the_triggers_on_its_first_write(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        brain.add("made under schema 1")
        back_to_schema_1(brain)
    conn = agentos(brain_path)
    agentos_add(conn, "mt_a", "an agent wrote this under schema 1", "user-42")
    conn.close()
    with Brain.open(brain_path, actor="test") as brain:
        assert brain.info()["schema_version"] == 1 and not brain.db.is_current
        assert brain.get("mt_a").scope_id == ""
        brain.add("the first write migrates")
        assert brain.info()["schema_version"] == schema.SCHEMA_VERSION and brain.db.is_current
        assert brain.get("mt_a").scope_id == "user-42"
        pattern = f"{brain_path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"
        backups = list(brain_path.parent.glob(pattern))
        assert len(backups) == 1
        conn = agentos(brain_path)
        agentos_add(conn, "mt_b", "Quasarfig after the migration", "user-42")
        conn.close()
        assert found(brain, "Quasarfig") == ["mt_b"]


def test_a_rowid_another_program_deleted_carries_no_old_words(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        conn = agentos(migrated)
        agentos_add(conn, "mt_ghost", "zqghost words", "")
        assert found(brain, "zqghost") == ["mt_ghost"]  # indexed
        rowid = conn.execute("SELECT rowid FROM memory_traces WHERE id = 'mt_ghost'").fetchone()[0]
        conn.execute(
            "INSERT INTO memory_traces_fts(memory_traces_fts, rowid, content, tags) "
            "VALUES ('delete', ?, 'zqghost words', '[]')",
            (rowid,),
        )
        conn.execute("DELETE FROM memory_traces WHERE id = 'mt_ghost'")
        conn.close()
        fresh = brain.add("fresh note zqnew")
        assert (
            brain.db.conn.execute(
                "SELECT rowid FROM memory_traces WHERE id = ?", (fresh.id,)
            ).fetchone()[0]
            == rowid
        )  # the same rowid, taken again
        assert found(brain, "zqghost") == []
        assert found(brain, "zqnew") == [fresh.id]
        assert_index_holds_each_row_once(brain)


def test_migrating_from_1_indexes_what_another_program_wrote_meanwhile(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        edited = brain.add("zqold text of a memgui note").id
        back_to_schema_1(brain)
    conn = agentos(brain_path)
    agentos_add(conn, "mt_a", "zqagent wrote this under schema 1", "")
    agentos_set_content(conn, edited, "zqnewtext set by the agent")
    conn.close()
    with Brain.open(brain_path, actor="test") as brain:
        brain.add("the first write migrates")
        assert found(brain, "zqagent") == ["mt_a"]
        assert found(brain, "zqnewtext") == [edited]
        assert found(brain, "zqold") == []


def test_another_program_taking_a_scope_id_away_files_the_row_under_none(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        conn = agentos(migrated)
        agentos_add(conn, "mt_drop", "dropped", "u1")
        agentos_add(conn, "mt_null", "nulled", "u1")
        agentos_add(conn, "mt_keep", "kept", "u1")
        conn.execute("UPDATE memory_traces SET metadata = '{}' WHERE id = 'mt_drop'")
        conn.execute(
            "UPDATE memory_traces SET metadata = '{\"scopeId\": null}' WHERE id = 'mt_null'"
        )
        conn.execute(
            'UPDATE memory_traces SET metadata = \'{"scopeId": "u1", "x": 1}\' '
            "WHERE id = 'mt_keep'"
        )
        conn.close()
        assert brain.get("mt_drop").scope_id == "" and brain.get("mt_null").scope_id == ""
        assert brain.get("mt_keep").scope_id == "u1"
        assert brain.delete_scope("user", "u1").count == 1


def test_once_another_program_writes_memgui_indexes_at_every_commit(
    migrated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgui.core.storage import db

    monkeypatch.setattr(db, "SHARED_CHECK_S", 0.0)  # seen at the next write, not a second later
    with Brain.open(migrated, actor="test") as brain:
        brain.add("batched while memgui writes alone")
        assert fulltext.has_pending(brain.db) and not brain.db.is_shared()
        conn = agentos(migrated)
        agentos_add(conn, "mt_a", "an agent's note", "")
        added = brain.add("written after the agent")
        assert brain.db.is_shared() and not fulltext.has_pending(brain.db)
        # AgentOS rebuilds its index after an update: memgui's rows are there exactly once.
        conn.execute("INSERT INTO memory_traces_fts(memory_traces_fts) VALUES ('rebuild')")
        brain.update(added.id, {"content": "changed after the rebuild"})
        conn.execute(
            "INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('integrity-check', 1)"
        )
        conn.close()


def test_an_agentos_brain_is_shared_from_its_migration(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy, actor="test") as brain:
        brain.add("the first write migrates")
        assert brain.db.is_shared() and not fulltext.has_pending(brain.db)


def test_a_row_another_program_replaces_leaves_no_old_words(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        own = brain.add("zqreplaced words of memgui")
        brain.add("a later note")  # the replaced row is not the last: it gets a new rowid
        brain.flush_index()
        conn = agentos(migrated)
        conn.execute(
            "INSERT OR REPLACE INTO memory_traces (brain_id, id, type, scope, content, "
            "created_at, tags, metadata) VALUES ('brain', ?, 'semantic', 'user', "
            "'zqreplacement words', 1, '[]', '{}')",
            (own.id,),
        )
        conn.close()
        # A phrase: the word as written (a bare one finds its forms, "zqreplacement" too).
        assert found(brain, '"zqreplaced"') == []
        assert found(brain, "zqreplacement") == [own.id]
        assert_index_holds_each_row_once(brain)


def test_a_brain_missing_a_trigger_gets_it_on_its_first_write(migrated: Path) -> None:
    conn = agentos(migrated)
    conn.execute("DROP TRIGGER memgui_fts_mark_replace")
    conn.close()
    with Brain.open(migrated, actor="test") as brain:
        assert "memgui_fts_mark_replace" not in brain.db.triggers  # opening writes nothing
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        brain.add("a first write")
        assert set(schema.MEMGUI_TRIGGER_NAMES) <= brain.db.triggers


def test_a_refused_first_write_makes_the_missing_trigger_at_the_next(migrated: Path) -> None:
    conn = agentos(migrated)
    conn.execute("DROP TRIGGER memgui_fts_mark_replace")
    conn.close()
    with Brain.open(migrated, actor="test") as brain:
        with pytest.raises(NotFound):
            brain.forget("mt_missing")  # the transaction that made it rolls back
        assert "memgui_fts_mark_replace" not in brain.db.triggers
        brain.add("a second write")
        assert "memgui_fts_mark_replace" in brain.db.triggers


def test_another_programs_upsert_is_marked_and_not_refused(migrated: Path) -> None:
    with Brain.open(migrated, actor="test") as brain:
        own = brain.add("zqbefore the upsert")
        pending = brain.add("zqpending edit")
        brain.flush_index()
        brain.update(pending.id, {"content": "zqpending edited"})  # not yet indexed
        conn = agentos(migrated)
        conn.execute(
            "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
            "VALUES ('brain', ?, 'semantic', 'user', 'zqafter the upsert', 1), "
            "('brain', ?, 'semantic', 'user', 'zqpending upserted', 1), "
            "('brain', 'mt_new', 'semantic', 'user', 'zqbrand new', 1) "
            "ON CONFLICT(brain_id, id) DO UPDATE SET content = excluded.content",
            (own.id, pending.id),
        )
        conn.close()
        assert found(brain, "zqafter") == [own.id] and found(brain, "zqbefore") == []
        # Phrases: the exact words (a bare word finds its other forms, `upsert` too).
        assert found(brain, '"upserted"') == [pending.id] and found(brain, '"edited"') == []
        assert found(brain, "zqbrand") == ["mt_new"]
        assert_index_holds_each_row_once(brain)


def test_a_brain_with_triggers_of_an_earlier_memgui_gets_them_as_they_are_now(
    migrated: Path,
) -> None:
    conn = agentos(migrated)
    conn.execute("DROP TRIGGER memgui_fts_mark_update")
    conn.execute(
        "CREATE TRIGGER memgui_fts_mark_update AFTER UPDATE OF content ON memory_traces "
        "BEGIN SELECT 1; END"
    )
    conn.close()
    with Brain.open(migrated, actor="test") as brain:
        brain.add("a first write")
        sql = brain.db.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'memgui_fts_mark_update'"
        ).fetchone()[0]
        assert "memgui_fts_pending" in sql
