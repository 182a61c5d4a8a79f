"""Both full-text indexes follow every write, including the AgentOS one its own search reads."""

from __future__ import annotations

from pathlib import Path

from memgui.core import fulltext
from memgui.core.brain import Brain


def agentos_match(path: Path, query: str) -> set[str]:
    """What AgentOS's own index (porter ascii, external content) returns, read directly."""
    with Brain.open(path) as brain:
        rows = brain.db.conn.execute(
            "SELECT t.id FROM memory_traces_fts f JOIN memory_traces t ON t.rowid = f.rowid "
            "WHERE memory_traces_fts MATCH ? AND t.deleted = 0",
            (query,),
        ).fetchall()
    return {r[0] for r in rows}


def test_pending_rows_are_found_before_any_flush(brain: Brain) -> None:
    t = brain.add("zebra crossing")
    assert fulltext.has_pending(brain.db)
    assert [x.id for x in brain.search("zebra").traces] == [t.id]
    assert not fulltext.has_pending(brain.db)


def test_close_brings_the_agentos_index_up_to_date(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        a = brain.add("original words")
        b = brain.add("to be purged")
    assert agentos_match(brain_path, "original") == {a.id}
    with Brain.open(brain_path) as brain:
        brain.update(a.id, {"content": "replacement text", "tags": ["label"]})
        brain.purge(b.id)
    assert agentos_match(brain_path, "original") == set()
    assert agentos_match(brain_path, "replacement") == {a.id}
    assert agentos_match(brain_path, "label") == {a.id}
    assert agentos_match(brain_path, "purged") == set()
    with Brain.open(brain_path) as brain:
        check = brain.db.conn.execute(
            "INSERT INTO memory_traces_fts(memory_traces_fts, rank) VALUES ('integrity-check', 1)"
        )
        assert check.fetchall() == []


def test_many_adds_flush_in_batches(brain: Brain) -> None:
    for i in range(fulltext.FLUSH_AFTER + 5):
        brain.add(f"note {i}")
    pending = brain.db.conn.execute("SELECT count(*) FROM memgui_fts_pending").fetchone()[0]
    assert pending < fulltext.FLUSH_AFTER
    assert len(brain.search("note", limit=200).traces) == 200


def test_migrated_agentos_brain_keeps_its_index_consistent(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        target = brain.search("dark mode", record_recall=False).traces[0]
        brain.update(target.id, {"content": "prefers light themes now"})
    assert target.id not in agentos_match(agentos_copy, '"dark mode"')
    assert agentos_match(agentos_copy, "light") == {target.id}
