"""A brain file synced through SQLite's own handle, and the checkpoint thread's use of it."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from memgui.core.brain import Brain
from memgui.core.storage import checkpoint, file_sync
from memgui.core.storage.file_sync import sync_main_file
from tests.support.waiting import WAIT_S

STEP, RESTART = 100, 1_000  # WAL pages: small, so that a hundred adds go past both


class RecordingVFS(apsw.VFS):
    """The default VFS, noting each file's `xSync` calls."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.syncs: list[tuple[str, int]] = []
        super().__init__(name, "")

    def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:
        label = name.filename() if isinstance(name, apsw.URIFilename) else str(name)
        return RecordingFile(self, label, name, flags)


class RecordingFile(apsw.VFSFile):
    def __init__(self, vfs: RecordingVFS, label: str, name: Any, flags: list[int]) -> None:
        self.vfs, self.label = vfs, label
        super().__init__("", name, flags)

    def xSync(self, flags: int) -> None:
        self.vfs.syncs.append((self.label, flags))
        super().xSync(flags)


@pytest.fixture
def recording_vfs() -> Any:
    vfs = RecordingVFS("recording-sync")
    yield vfs
    vfs.unregister()


def test_the_main_file_is_synced_by_the_connections_own_vfs(
    tmp_path: Path, recording_vfs: RecordingVFS
) -> None:
    path = tmp_path / "brain.sqlite"
    conn = apsw.Connection(str(path), vfs=recording_vfs.name)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t(x)")
        recording_vfs.syncs.clear()
        assert sync_main_file(conn)
        # The brain file alone (not its WAL), as a checkpoint syncs it.
        assert recording_vfs.syncs == [(str(path), file_sync.SQLITE_SYNC_NORMAL)]
    finally:
        conn.close()


def test_nothing_to_sync_is_told_not_raised(tmp_path: Path) -> None:
    memory = apsw.Connection(":memory:")
    assert not sync_main_file(memory)  # no file
    closed = apsw.Connection(str(tmp_path / "closed.sqlite"))
    closed.close()
    assert not sync_main_file(closed)


def test_the_last_pass_syncs_the_file_before_writers_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the checkpoint thread takes the writer lock to start the WAL over, the pages
    its passes copied are synced already: the pass under the lock has little to write out."""
    monkeypatch.setattr(checkpoint, "STEP_PAGES", STEP)
    monkeypatch.setattr(checkpoint, "RESTART_PAGES", RESTART)
    events: list[str] = []

    def syncing(conn: apsw.Connection) -> bool:
        synced = sync_main_file(conn)
        events.append("synced" if synced else "not synced")
        return synced

    monkeypatch.setattr(checkpoint, "sync_main_file", syncing)
    with Brain.open(tmp_path / "brain.sqlite", actor="test") as brain:
        checkpointer = brain.db.checkpointer
        assert checkpointer is not None
        lock = checkpointer.writer_lock

        class NotedLock:
            """The writer lock, noting when the checkpoint thread takes it."""

            def acquire(self, timeout: float = -1) -> bool:
                taken = lock.acquire(timeout=timeout)
                if taken and threading.current_thread().name.startswith("checkpoint"):
                    # The last pass's (a truncation after a quiet second takes it too).
                    events.append(f"locked by {sys._getframe(1).f_code.co_name}")
                return taken

            def release(self) -> None:
                lock.release()

        checkpointer.writer_lock = NotedLock()  # type: ignore[assignment]
        deadline = time.monotonic() + WAIT_S  # only a bound: the lock is taken long before
        added = 0
        while "locked by _pass" not in events:  # 12-14 pages an add: ~75 go past RESTART
            assert time.monotonic() < deadline, "the checkpoint thread never took the lock"
            brain.add(f"fact number {added} about the release process", tags=["t"])
            added += 1
    first = events.index("locked by _pass")
    assert events[first - 2 : first] == ["synced", "synced"]  # synced, a pass, synced again
