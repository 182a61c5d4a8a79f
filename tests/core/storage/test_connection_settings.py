"""What every connection memgui opens to a brain asks of SQLite."""

from __future__ import annotations

from pathlib import Path

from memgui.core.brain import Brain
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
