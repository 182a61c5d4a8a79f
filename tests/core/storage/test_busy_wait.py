"""A brain connection waits for another connection's lock with memgui's busy handler
(csrc/busy_wait.c: a look every millisecond, without Python's lock), up to its wait and
no longer; without the extension, with SQLite's busy timeout."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.errors import BrainBusy
from memgui.core.search import bm25
from memgui.core.storage import busy_wait

SAFETY_S = 60.0  # a bound on each wait below, never reached when the code is right


def holder_of(path: Path) -> apsw.Connection:
    """Another connection to the brain, holding its write lock."""
    conn = apsw.Connection(str(path))
    conn.execute("BEGIN IMMEDIATE")
    return conn


def polls_seen() -> int:
    probe = apsw.Connection(":memory:")
    assert bm25.load(probe), "memgui_bm25 is built by the install"
    busy_wait.set_wait(probe, 0)
    polls = busy_wait.polls(probe)
    assert polls is not None
    return polls


@pytest.fixture
def brain(brain_path: Path):
    b = Brain.open(brain_path, actor="test")
    b.add("alpha one")
    yield b
    b.close()


def test_a_write_behind_another_connections_lock_polls_for_it_and_goes_on_once_free(
    brain: Brain, brain_path: Path
) -> None:
    holder = holder_of(brain_path)
    before = polls_seen()
    added: list[str] = []
    writer = threading.Thread(target=lambda: added.append(brain.add("written once free").id))
    writer.start()
    # The writer's handler looks for the lock again and again while it is held (SQLite's
    # own busy timeout never calls memgui's handler: the count would stay).
    deadline = time.monotonic() + SAFETY_S
    while polls_seen() < before + 3:
        assert time.monotonic() < deadline, "the write never polled for the lock"
        assert writer.is_alive() and not added, "the write went on while the lock was held"
    holder.execute("COMMIT")
    writer.join(SAFETY_S)
    assert not writer.is_alive()
    assert [t.content for t in brain.get_many(added).values()] == ["written once free"]
    assert brain.count() == 2


def polls_of_a_write_that_gives_up(brain: Brain, brain_path: Path) -> int:
    """An add behind another connection's lock, refused after the brain's 0.2 s write
    wait and no sooner, writing nothing; the handler's looks for the lock meanwhile."""
    brain.write_wait_s = 0.2
    count = brain.count()
    holder = holder_of(brain_path)
    before = polls_seen()
    started = time.monotonic()
    with pytest.raises(BrainBusy):
        brain.add("never written")
    assert time.monotonic() - started >= 0.2
    polls = polls_seen() - before
    holder.execute("ROLLBACK")
    assert brain.count() == count
    return polls


def test_a_write_gives_up_after_its_wait_having_polled_meanwhile(
    brain: Brain, brain_path: Path
) -> None:
    assert polls_of_a_write_that_gives_up(brain, brain_path) >= 2  # the handler waited


def test_a_wait_of_zero_gives_up_at_once_without_polling(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as b:
        b.add("alpha one")
    holder = holder_of(brain_path)
    conn = apsw.Connection(str(brain_path))
    assert bm25.load(conn)
    busy_wait.set_wait(conn, 0)
    before = polls_seen()
    with pytest.raises(apsw.BusyError):
        conn.execute("BEGIN IMMEDIATE")
    assert polls_seen() == before
    # Each connection keeps its own wait: this one's 150 ms, the zero of another beside it.
    other = apsw.Connection(str(brain_path))
    assert bm25.load(other)
    busy_wait.set_wait(other, 150)
    started = time.monotonic()
    with pytest.raises(apsw.BusyError):
        other.execute("BEGIN IMMEDIATE")
    assert time.monotonic() - started >= 0.15
    assert polls_seen() > before
    started = time.monotonic()
    with pytest.raises(apsw.BusyError):
        conn.execute("BEGIN IMMEDIATE")
    assert time.monotonic() - started < 0.15
    holder.execute("ROLLBACK")


def test_a_wait_that_is_not_whole_ms_or_set_from_the_schema_is_refused(brain_path: Path) -> None:
    conn = apsw.Connection(str(brain_path))
    assert bm25.load(conn)
    with pytest.raises(apsw.SQLError, match="the wait must be an integer of ms"):
        conn.execute("SELECT memgui_busy_wait(1.5)").fetchall()
    # A view (or a trigger) in a brain file cannot change how long its reader waits.
    conn.execute("CREATE VIEW endless AS SELECT memgui_busy_wait(2147483647) AS ms")
    with pytest.raises(apsw.SQLError, match="unsafe use of memgui_busy_wait"):
        conn.execute("SELECT ms FROM endless").fetchall()


def test_without_the_extension_sqlites_busy_timeout_waits(
    brain_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(bm25.DISABLE_ENV, "fts5")
    with Brain.open(brain_path, actor="test") as b:
        monkeypatch.delenv(bm25.DISABLE_ENV)  # the probe of the count loads it
        b.add("alpha one")
        assert not bm25.available(b.db.conn)
        assert busy_wait.polls(b.db.conn) is None
        assert polls_of_a_write_that_gives_up(b, brain_path) == 0  # SQLite's handler waited
        b.add("written once free")
        assert b.count() == 2
