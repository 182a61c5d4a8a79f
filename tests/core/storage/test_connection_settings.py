"""What every connection memgui opens to a brain asks of SQLite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fulltext, keyword, stems
from memgui.core.storage import db


def test_each_brain_connection_keeps_a_page_cache_as_agentos_driver_does(
    brain_path: Path,
) -> None:
    # better-sqlite3 builds SQLite with a 16,000 KiB cache; SQLite's own default is 2,000.
    assert db.CACHE_KIB == 16_000
    with Brain.open(brain_path, actor="test") as brain:
        brain.add("the harbour crane at dusk")
        assert brain.db.conn.execute("PRAGMA cache_size").get == -db.CACHE_KIB
    brain_path.chmod(0o444)
    try:
        with Brain.open(brain_path) as reader:
            assert reader.read_only
            assert reader.db.conn.execute("PRAGMA cache_size").get == -db.CACHE_KIB
    finally:
        brain_path.chmod(0o644)


def test_a_statement_is_compiled_once_not_again_for_each_value_bound(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        for n in range(30):
            brain.add(f"python parser step {n} compiles the grammar")
        fulltext.flush(brain.db)
        conn = brain.db.conn
        ranking = keyword.statements(brain.db, stems.TABLE, brain.brain_id, TraceFilter()).ranking
        paging = "SELECT id FROM memory_traces WHERE brain_id = ? ORDER BY rowid LIMIT ?"
        compiled: list[tuple[Any, ...]] = []  # the authorizer is asked at every compile

        def authorize(*action: Any) -> int:
            compiled.append(action)
            return apsw.SQLITE_OK

        def search() -> None:
            for n, query in enumerate(("python parser", "grammar step", "compiles python")):
                assert len(conn.execute(ranking, (query, 24)).fetchall()) == 24
                assert len(conn.execute(paging, (brain.brain_id, n + 5)).fetchall()) == n + 5

        conn.authorizer = authorize  # which has every statement compiled again, once
        search()
        assert any("memgui_stems_idx" in action for action in compiled)  # FTS5's own
        first = len(compiled)
        search()
        # Without the planner's stability guarantee SQLite compiled both statements again at
        # every run (it plans `LIMIT ?` with its value), and FTS5's lookup of a term's page
        # in each segment (`memgui_stems_idx`) at every term.
        assert compiled[first:] == []
