"""Copying the WAL back into the brain file on a thread of its own.

SQLite's automatic checkpoint runs in the thread that commits: every ~1,100 single adds one
of them waited ~190 ms while the WAL and the brain file were synced to the disk. Here a
commit only counts the WAL's pages (the WAL hook); a thread with its own connection copies
them back in passes of `STEP_PAGES` while writers go on (PASSIVE), and once the WAL holds
`RESTART_PAGES` it takes this process's writer lock for one short last pass, so that the
next write starts the WAL over instead of growing it. The brain file is synced before that
lock is taken (`_settle`): SQLite syncs it only in the pass that reaches the WAL's end. If
that thread cannot run, the writer checkpoints itself past `RESTART_PAGES`, as SQLite would.

Once no commit came for `IDLE_S`, the thread copies every frame back and truncates the WAL.
A brain at rest then keeps nothing in its `-wal`: moved away, it holds every write, and a
file put at its path instead does not read the old brain's frames (the `-wal` goes by the
path's name, not by the file). The thread never touches the WAL once another file is at the
path: that file's writers may use it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import apsw

from memgui.core.storage import commit_count
from memgui.core.storage.file_sync import sync_main_file

log = logging.getLogger(__name__)

STEP_PAGES = 1_000  # a pass every ~4 MB of WAL (~75 single adds)
RESTART_PAGES = 16_000  # the WAL is started over from ~64 MB (~1,100 single adds)
LOCK_POLL_S = 0.05  # how often a last pass waiting for the writer lock checks for close
IDLE_S = 1.0  # no commit for this long: the WAL is copied back whole and truncated


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`; None when nothing is there."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


class Checkpointer:
    """The WAL hook of one writing connection and the thread that checkpoints for it."""

    def __init__(
        self, path: Path, writer_lock: threading.RLock, identity: tuple[int, int] | None
    ) -> None:
        self.path = path
        self.writer_lock = writer_lock
        self.identity = identity  # (device, inode) of the file the writer opened
        self.wal_pages = 0  # as the last commit left the WAL
        self.passes = 0
        self.truncations = 0
        self.failed = False  # the thread could not checkpoint: the writer does it
        self.elsewhere = False  # another file is at the path: the WAL is left alone
        self._last_commit = 0.0  # monotonic
        self._unfolded = False  # commits since the WAL was last truncated
        self._pass_due = False
        self._next_pass = STEP_PAGES
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None

    def on_commit(self, _conn: apsw.Connection, _name: str, pages: int) -> int:
        """The WAL hook: runs in the committing thread, so it only counts and wakes."""
        commit_count.note_local_commit(self.identity)  # this process's, not another program's
        if pages < self.wal_pages:  # the WAL was started over
            self._next_pass = STEP_PAGES
        self.wal_pages = pages
        self._last_commit = time.monotonic()
        was_unfolded, self._unfolded = self._unfolded, True
        if self.failed or self.elsewhere:
            return apsw.SQLITE_OK
        if pages >= self._next_pass:
            self._next_pass = pages + STEP_PAGES
            self._pass_due = True
        # A pass, or the watch for a quiet spell, starts (with the thread at the first commit).
        if (self._pass_due or not was_unfolded) and (self._thread is not None or self._start()):
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
    def at_rest(self) -> bool:
        """No commit since the WAL was last truncated (or the brain was opened)."""
        return not self._unfolded

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
        # Opened by name: if another file took the path first, it is not this brain (and
        # its WAL, which goes by the path's name, may hold this brain's frames).
        if not self._path_is_ours(missing_ok=False):
            self.elsewhere = True
            return
        try:
            conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
            # Closing never checkpoints: should the file at the path have changed in between,
            # that would copy this brain's frames into it. The writer folds the WAL in.
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            conn.setbusytimeout(1_000)
            conn.execute("PRAGMA synchronous = NORMAL")  # as the writer: sync at checkpoints
        except apsw.Error:
            log.exception("%s: no checkpoint connection; the writer checkpoints", self.path)
            self.failed = True
            return
        try:
            if not self._path_is_ours(missing_ok=False):
                self.elsewhere = True
                return
            while True:
                self._wake.wait(timeout=IDLE_S if self._unfolded else None)
                self._wake.clear()
                if self._closing:
                    return
                if not self._path_is_ours():
                    self.elsewhere = True
                    return
                if self._pass_due:
                    self._pass_due = False
                    self._pass(conn)
                elif self._unfolded and time.monotonic() - self._last_commit >= IDLE_S:
                    self._truncate(conn)
        finally:
            conn.close()

    def _path_is_ours(self, missing_ok: bool = True) -> bool:
        """The file at the path is the one open, or (`missing_ok`) nothing is there: moved
        away or deleted, our frames can only go into our own file, through our connection."""
        found = file_identity(self.path)
        if found is None:
            return missing_ok
        return self.identity is None or found == self.identity

    def _truncate(self, conn: apsw.Connection) -> None:
        """After a quiet spell: every frame into the file, and the WAL truncated. Under this
        process's writer lock, so no write of its own comes in between; readers of other
        processes make it wait for the next quiet spell instead of blocking writers here."""
        try:  # most frames first, without holding up this process's writers
            conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
        except apsw.BusyError:
            pass
        except apsw.Error:
            log.exception("%s: checkpoint failed; the writer checkpoints", self.path)
            self.failed = True
            return
        sync_main_file(conn)  # what the pass above copied, before writers may wait
        if not self.writer_lock.acquire(timeout=LOCK_POLL_S):
            return  # a transaction is open: its commit starts the next quiet spell
        try:
            if time.monotonic() - self._last_commit < IDLE_S:
                return
            conn.setbusytimeout(0)
            try:
                conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
            finally:
                conn.setbusytimeout(1_000)
            self._unfolded = False
            self.wal_pages = 0
            self._next_pass = STEP_PAGES
            self.truncations += 1
        except apsw.BusyError:
            pass  # a reader is in the WAL: try again after the next quiet spell
        except apsw.Error:
            log.exception("%s: checkpoint failed; the writer checkpoints", self.path)
            self.failed = True
        finally:
            self.writer_lock.release()

    def _settle(self, conn: apsw.Connection) -> None:
        """The file synced before the last pass takes the writer lock. SQLite syncs it only
        in a pass that reaches the WAL's end, so that pass, under the lock, had every page
        the passes before it copied to write out: up to 150 ms at 1M traces, with every
        write of this process waiting. Synced here, a pass to copy what came meanwhile,
        and synced again: the pass under the lock writes out little."""
        if sync_main_file(conn):
            conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            sync_main_file(conn)

    def _pass(self, conn: apsw.Connection) -> None:
        try:
            conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
            self.passes += 1
            if self.wal_pages < RESTART_PAGES:
                return
            self._settle(conn)
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
