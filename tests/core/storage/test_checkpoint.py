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


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.mark.usefixtures("small_wal")
def test_the_thread_copies_the_wal_back_and_the_wal_starts_over(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        brain.add("first")
        size_before = brain.path.stat().st_size
        add_many(brain, 300)  # 12-14 pages an add: ~4,000 pages written
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        wait_for(lambda: checkpointer.passes >= 3)
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


KILLED_WRITER = """
import sys
from memgui.core.storage import checkpoint
checkpoint.STEP_PAGES, checkpoint.RESTART_PAGES = 100, 1000
from memgui.core.brain import Brain
brain = Brain.open(sys.argv[1], actor="test")
i = 0
while True:
    brain.add(f"fact number {i} about the release process", tags=["t"])
    i += 1
    if i == 300:
        print("checkpointing", flush=True)
"""


@pytest.mark.slow
def test_kill_9_while_checkpointing_keeps_every_committed_add_whole(tmp_path: Path) -> None:
    path = tmp_path / "brain.sqlite"
    with killed_once_it_says(KILLED_WRITER, [str(path)], says="checkpointing"):
        time.sleep(0.3)  # the writer and the checkpoint thread at work
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


def test_after_a_quiet_spell_the_wal_is_folded_in_and_truncated(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        add_many(brain, 20)
        assert wal_size(brain.path) > 0
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        wait_for(lambda: checkpointer.truncations >= 1)
        assert wal_size(brain.path) == 0
        add_many(brain, 5, start=20)  # the WAL grows again, and is truncated again
        wait_for(lambda: checkpointer.truncations >= 2)
        assert wal_size(brain.path) == 0
        assert brain.info()["live"] == 25


def test_a_brain_moved_away_while_open_keeps_its_writes(tmp_path: Path) -> None:
    path, moved = tmp_path / "brain.sqlite", tmp_path / "moved.sqlite"
    brain = Brain.open(path, actor="test")
    add_many(brain, 50)
    path.rename(moved)  # at once: the writes are still in the WAL at the old name
    brain.close()
    with Brain.open(moved, actor="test") as again:
        assert again.info()["live"] == 50


def test_a_file_put_at_a_brains_path_reads_as_itself(tmp_path: Path) -> None:
    path, other = tmp_path / "brain.sqlite", tmp_path / "other.sqlite"
    with Brain.open(other, actor="test") as replacement:
        for i in range(10):
            replacement.add(f"the replacement's note {i}")
    brain = Brain.open(path, actor="test")
    add_many(brain, 50)
    checkpointer = brain.db.checkpointer
    assert checkpointer is not None
    wait_for(lambda: checkpointer.truncations >= 1)  # at rest
    other.replace(path)  # a backup restored over the open brain
    with Brain.open(path, actor="test") as reader:
        assert reader.info()["live"] == 10
        reader.add("written to the replacement")
    brain.close()
    assert checkpointer.elsewhere or checkpointer.truncations == 1
    with Brain.open(path, actor="test") as reopened:
        contents = {t.content for t in reopened.list()}
        assert "written to the replacement" in contents and len(contents) == 11
