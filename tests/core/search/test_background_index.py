"""A connection that indexes later (the app's) never flushes; the upkeep indexes its marks."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from memgui.core.maintenance import Maintainer
from memgui.core.search import background_index, fulltext
from tests.support.brains import agentos_index_ids

WAIT_S = 30.0


@pytest.fixture
def flushes(monkeypatch) -> list[tuple[str, int]]:
    """Every batch any connection indexes: (the thread's name, how many rows)."""
    seen: list[tuple[str, int]] = []
    index_rows = fulltext._index_rows

    def counted(db: Any, rows: list[Any], agentos: bool) -> None:
        seen.append((threading.current_thread().name, len(rows)))
        index_rows(db, rows, agentos)

    monkeypatch.setattr(fulltext, "_index_rows", counted)
    return seen


def ids(brain: Brain, query: str, limit: int = 200) -> set[str]:
    return {t.id for t in brain.search(query, limit=limit).traces}


def test_writes_and_searches_that_index_later_never_flush(brain: Brain, flushes) -> None:
    brain.index_later()
    count = 3 * fulltext.FLUSH_AFTER + 5
    added = [brain.add(f"note {i} zebra").id for i in range(count)]
    changed = brain.update(added[0], {"content": "walrus only"})
    brain.forget(added[1])
    # Every mark waits; each is found by its text now, none by a text it no longer has.
    assert fulltext.pending_count(brain.db) == count
    assert ids(brain, "zebra") == set(added[2:])
    assert ids(brain, "walrus") == {changed.id}
    assert fulltext.pending_count(brain.db) == count
    brain.close()
    assert flushes == []  # not at close either: the marks wait on disk (as after a crash)


def test_a_crash_loses_no_mark_and_the_upkeep_indexes_them(brain_path: Path, flushes) -> None:
    with Brain.open(brain_path) as writer:
        writer.index_later()
        added = {writer.add(f"entry {i} kestrel").id for i in range(100)}
        writer.db.conn.close()  # gone without a flush or a checkpoint, as in a crash
    upkeep = Maintainer(brain_path, None, interval=3600, index_pending=True).start()
    try:
        with Brain.open(brain_path) as reader:
            reader.index_later()
            assert ids(reader, "kestrel") == added  # found while they wait
            passes = 0
            while fulltext.pending_count(reader.db):
                passes += 1
                assert upkeep.wait_for_index_passes(passes, WAIT_S)
            assert ids(reader, "kestrel") == added
            # AgentOS's own index holds them too, as a flush at every write left it.
            assert agentos_index_ids(reader, "kestrel") == added
    finally:
        upkeep.stop()
    assert upkeep.indexed_rows == 100
    assert {name for name, _ in flushes} == {"memgui-maintenance"}


def test_the_upkeep_indexes_a_small_batch_per_transaction(brain: Brain, flushes) -> None:
    brain.index_later()
    with brain.batch():  # one write marking many rows: an edit of many traces at once
        for i in range(180):
            brain.add(f"row {i} heron")
    with Brain.open(brain.path, create=False) as upkeep:
        indexer = background_index.Indexer(upkeep.db)
        assert indexer.index_pass()
    assert fulltext.pending_count(brain.db) == 0
    assert indexer.indexed == 180 and indexer.batches == len(flushes) > 1
    assert max(rows for _, rows in flushes) <= background_index.MAX_ROWS
    assert len(ids(brain, "heron")) == 180


def test_a_write_of_another_program_still_flushes_at_every_write(brain: Brain, flushes) -> None:
    brain.index_later()
    brain.db.mark_shared()  # AgentOS writes this brain too: its index stays current
    brain.add("first otter")
    assert fulltext.pending_count(brain.db) == 0
    assert len(flushes) == 1
