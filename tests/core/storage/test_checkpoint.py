"""Checkpoints on a thread of their own: the WAL goes back into the file and starts over."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.storage import checkpoint
from tests.support.killed_child import killed_once_it_says

STEP, RESTART = 100, 1_000  # pages: small, so that a few hundred adds go past both


@pytest.fixture
def small_wal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint, "STEP_PAGES", STEP)
    monkeypatch.setattr(checkpoint, "RESTART_PAGES", RESTART)


def frame_bytes(brain: Brain) -> int:
    return brain.db.conn.execute("PRAGMA page_size").fetchone()[0] + 24


def add_many(brain: Brain, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        brain.add(f"fact number {i} about the release process", tags=["t"])


def wait_for(condition, timeout: float = 60.0) -> None:
    """Look until `condition()` holds; the timeout is only a safety net."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def short_quiet_spell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint, "IDLE_S", 0.05)


@pytest.mark.usefixtures("small_wal")
def test_the_thread_copies_the_wal_back_and_the_wal_starts_over(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        brain.add("first")
        size_before = brain.path.stat().st_size
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        for start in range(0, 300, 30):  # 12-14 pages an add: ~4,000 pages written
            passes = checkpointer.passes
            add_many(brain, 30, start)  # ~400 pages: passes are due
            wait_for(lambda passes=passes: checkpointer.passes > passes)
        assert brain.path.stat().st_size > size_before  # pages were copied back
        # Started over at least once: without that the WAL would hold every frame written.
        wal = Path(f"{brain.path}-wal").stat().st_size
        assert wal <= 32 + 2 * RESTART * frame_bytes(brain)
        assert not checkpointer.failed


@pytest.mark.usefixtures("small_wal")
def test_without_the_thread_the_writer_checkpoints_itself(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        brain.add("first")
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        checkpointer.failed = True  # as when its connection cannot be opened
        add_many(brain, 300)
        assert checkpointer.passes == 0
        wal = Path(f"{brain.path}-wal").stat().st_size
        assert wal <= 32 + (RESTART + 20) * frame_bytes(brain)  # one add past the size, no more


@pytest.mark.usefixtures("small_wal")
def test_close_stops_the_thread_and_leaves_every_write_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        add_many(brain, 200)
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        wait_for(lambda: checkpointer.passes >= 1)
    assert checkpointer._thread is not None and not checkpointer._thread.is_alive()
    assert not Path(f"{path}-wal").exists()  # the last connection folded the WAL in
    with Brain.open(path, actor="test") as again:
        assert again.info()["live"] == 200


def test_a_brain_only_read_has_no_checkpointer(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("kept")
    path.chmod(0o444)
    with Brain.open(path) as reader:
        assert reader.db.readonly and reader.db.checkpointer is None


# Says "checkpointing" as a pass of the checkpoint thread starts, once 300 adds are in;
# the writer goes on adding.
KILLED_WRITER = """
import sys
from memgui.core.storage import checkpoint
checkpoint.STEP_PAGES, checkpoint.RESTART_PAGES = 100, 1000
from memgui.core.brain import Brain
added, said = 0, []
real_pass = checkpoint.Checkpointer._pass
def announced_pass(self, conn):
    if added >= 300 and not said:
        said.append(True)
        print("checkpointing", flush=True)
    real_pass(self, conn)
checkpoint.Checkpointer._pass = announced_pass
brain = Brain.open(sys.argv[1], actor="test")
while True:
    brain.add(f"fact number {added} about the release process", tags=["t"])
    added += 1
"""


@pytest.mark.slow
def test_kill_9_while_checkpointing_keeps_every_committed_add_whole(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with killed_once_it_says(KILLED_WRITER, [str(path)], says="checkpointing"):
        pass  # killed with the writer and the checkpoint thread at work
    with Brain.open(path, actor="test") as reopened:
        conn = reopened.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        traces = conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0]
        journal = conn.execute("SELECT count(*) FROM memgui_journal").fetchone()[0]
        assert traces >= 300 and journal == traces  # each add whole: its row and its entry


@pytest.mark.usefixtures("small_wal")
def test_a_thread_that_cannot_start_leaves_the_commit_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(_thread: object) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(checkpoint.threading.Thread, "start", refuse)
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        add_many(brain, 300)  # the thread would start at the first commit
        monkeypatch.undo()
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None and checkpointer.failed
        assert brain.info()["live"] == 300  # every add committed and reported so
        wal = Path(f"{brain.path}-wal").stat().st_size
        assert wal <= 32 + (RESTART + 20) * frame_bytes(brain)  # the writer checkpointed


def wal_size(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


@pytest.mark.usefixtures("short_quiet_spell")
def test_after_a_quiet_spell_the_wal_is_folded_in_and_truncated(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        # Under the writer's lock, which a truncation takes too: none comes between the adds.
        with brain.db.lock:
            add_many(brain, 20)
            assert wal_size(brain.path) > 0
            truncated = checkpointer.truncations
        wait_for(lambda: checkpointer.truncations > truncated)
        assert wal_size(brain.path) == 0
        with brain.db.lock:
            add_many(brain, 5, start=20)  # the WAL grows again, and is truncated again
            assert wal_size(brain.path) > 0
        wait_for(lambda: checkpointer.truncations > truncated + 1)
        assert wal_size(brain.path) == 0
        assert brain.info()["live"] == 25


def test_a_brain_moved_away_while_open_keeps_its_writes(tmp_path: Path) -> None:
    path, moved = tmp_path / "brain.sqlite", tmp_path / "moved.sqlite"
    brain = Brain.open(path, actor="test")
    with brain.db.lock:  # no truncation comes first: the writes are in the WAL at the old name
        add_many(brain, 50)
        path.rename(moved)
        assert wal_size(path) > 0
    brain.close()
    with Brain.open(moved, actor="test") as again:
        assert again.info()["live"] == 50


@pytest.mark.usefixtures("short_quiet_spell")
def test_a_file_put_at_a_brains_path_reads_as_itself(tmp_path: Path) -> None:
    path, other = tmp_path / "brain.sqlite", tmp_path / "other.sqlite"
    with Brain.open(other, actor="test") as replacement:
        for i in range(10):
            replacement.add(f"the replacement's note {i}")
    brain = Brain.open(path, actor="test")
    checkpointer = brain.db.checkpointer
    assert checkpointer is not None
    with brain.db.lock:  # no truncation comes between the adds
        add_many(brain, 50)
        truncated = checkpointer.truncations
    wait_for(lambda: checkpointer.truncations > truncated)  # at rest: the WAL is empty
    other.replace(path)  # a backup restored over the open brain
    with Brain.open(path, actor="test") as reader:
        assert reader.info()["live"] == 10
        reader.add("written to the replacement")
    brain.close()
    assert checkpointer.elsewhere or checkpointer.truncations == truncated + 1
    with Brain.open(path, actor="test") as reopened:
        contents = {t.content for t in reopened.list_traces()}
        assert "written to the replacement" in contents and len(contents) == 11
