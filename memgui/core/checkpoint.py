"""Copying the WAL back into the brain file on a thread of its own.

SQLite's automatic checkpoint runs in the thread that commits: every ~1,100 single adds one
of them waited ~190 ms while the WAL and the brain file were synced to the disk. Here a
commit only counts the WAL's pages (the WAL hook); a thread with its own connection copies
them back in passes of `STEP_PAGES` while writers go on (PASSIVE), and once the WAL holds
`RESTART_PAGES` it takes this process's writer lock for one short last pass, so that the
next write starts the WAL over instead of growing it. If that thread cannot run, the writer
checkpoints itself past `RESTART_PAGES`, as SQLite would.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import apsw

log = logging.getLogger(__name__)

STEP_PAGES = 1_000  # a pass every ~4 MB of WAL (~75 single adds)
RESTART_PAGES = 16_000  # the WAL is started over from ~64 MB (~1,100 single adds)
LOCK_POLL_S = 0.05  # how often a last pass waiting for the writer lock checks for close


class Checkpointer:
    """The WAL hook of one writing connection and the thread that checkpoints for it."""

    def __init__(self, path: Path, writer_lock: threading.RLock) -> None:
        self.path = path
        self.writer_lock = writer_lock
        self.wal_pages = 0  # as the last commit left the WAL
        self.passes = 0
        self.failed = False  # the thread could not checkpoint: the writer does it
        self._next_pass = STEP_PAGES
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None

    def on_commit(self, _conn: apsw.Connection, _name: str, pages: int) -> int:
        """The WAL hook: runs in the committing thread, so it only counts and wakes."""
        if pages < self.wal_pages:  # the WAL was started over
            self._next_pass = STEP_PAGES
        self.wal_pages = pages
        if pages >= self._next_pass and not self.failed:
            self._next_pass = pages + STEP_PAGES
            if self._thread is not None or self._start():
                self._wake.set()
        return apsw.SQLITE_OK

    def _start(self) -> bool:
        # The commit is done when the hook runs: an error raised here would make it look
        # failed, so a thread that cannot start leaves the checkpoints to the writer.
        thread = threading.Thread(target=self._run, name=f"checkpoint {self.path.name}")
        thread.daemon = True
        try:
            thread.start()
        except RuntimeError:
            log.exception("%s: no checkpoint thread; the writer checkpoints", self.path)
            self.failed = True
            return False
        self._thread = thread
        return True

    @property
    def writer_must_checkpoint(self) -> bool:
        return self.failed and self.wal_pages >= RESTART_PAGES

    def close(self) -> None:
        """Stop the thread (a pass under way ends first). Call without the writer lock held
        for long: a last pass waiting for it gives up within `LOCK_POLL_S`."""
        self._closing = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        try:
            conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
            conn.setbusytimeout(1_000)
            conn.execute("PRAGMA synchronous = NORMAL")  # as the writer: sync at checkpoints
        except apsw.Error:
            log.exception("%s: no checkpoint connection; the writer checkpoints", self.path)
            self.failed = True
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                self._pass(conn)
        finally:
            conn.close()

    def _pass(self, conn: apsw.Connection) -> None:
        try:
            conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            self.passes += 1
            if self.wal_pages < RESTART_PAGES:
                return
            # Writers in this process wait for the few pages written since the pass above;
            # then every frame is in the file and the next write starts the WAL over.
            while not self.writer_lock.acquire(timeout=LOCK_POLL_S):
                if self._closing:
                    return
            try:
                conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            finally:
                self.writer_lock.release()
        except apsw.BusyError:
            pass  # another connection is checkpointing: the next pass goes on from there
        except apsw.Error:
            log.exception("%s: checkpoint failed; the writer checkpoints", self.path)
            self.failed = True
