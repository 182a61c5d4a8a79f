"""A brain's write transaction: `BEGIN IMMEDIATE … COMMIT` under the writer lock, with the
journal batch it writes (`WriteBatch`); SQLite's errors turned into memgui's.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import apsw

from memgui.core.changes import Changes, Event, changes_from
from memgui.core.errors import (
    BrainBusy,
    BrainFileLost,
    ReadOnlyBrain,
    RefusedByBrain,
    StorageError,
)
from memgui.core.storage import busy, busy_wait

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

log = logging.getLogger("memgui.core.storage.db")

BUSY_TIMEOUT_MS = 10_000  # SQLite's own wait for a lock, statement by statement

# SQLite's errors that say the file is not (or no longer) a sound brain.
DAMAGED = (apsw.CorruptError, apsw.NotADBError)
# What the disk or the file system did to a statement inside a transaction (a constraint or
# an SQL error is the caller's to handle, and goes on as it is).
STORAGE_FAILURES = (
    apsw.IOError, apsw.FullError, apsw.CantOpenError, apsw.ReadOnlyError, apsw.BusyError,
    apsw.LockedError, apsw.ProtocolError, apsw.NoLFSError, apsw.PermissionsError,
)  # fmt: skip


def extended_code(error: apsw.Error) -> int | None:
    """SQLite's extended result code of the error (apsw's type stubs leave it out)."""
    return getattr(error, "extendedresult", None)


@dataclass(slots=True)
class WriteBatch:
    """The open transaction: its journal batch id, actor, and what it changed so far (one
    event per journal row, noted where the row is written: `core/changes.py`)."""

    batch_id: str
    actor: str
    kind: str = "edit"
    events: list[Event] = field(default_factory=list)
    # PostgreSQL: what to do just before the transaction's first journal row (take the
    # brain's journal lock: `SharedTransactions.writing(order_late=True)`).
    before_first_row: Callable[[], None] | None = None

    def changes(self, since: int = 0) -> Changes:
        """The net effect of the events from `since` on (a call joined the batch there)."""
        events = self.events[since:] if since else self.events
        return changes_from(events, self.kind, self.batch_id, self.actor)


def new_batch_id() -> str:
    """A journal batch's id. Time-ordered ids append to the batch index instead of landing
    on random pages; 4 random bytes tell apart batches of the same nanosecond (a uuid4 costs
    6 µs)."""
    return f"b_{time.time_ns():x}_{os.urandom(4).hex()}"


class WriteTransaction:
    """`Database.write`: `BEGIN IMMEDIATE … COMMIT` under the writer lock, one journal batch.

    A class rather than a generator context manager: every add opens one, and the generator
    machinery alone cost ~5 µs of a ~150 µs add.
    """

    __slots__ = ("db", "actor", "operation", "kind", "joined", "wait_s")

    def __init__(
        self, db: Database, actor: str, operation: str, kind: str, wait_s: float | None = None
    ) -> None:
        self.db = db
        self.actor = actor
        self.operation = operation
        self.kind = kind
        self.joined = False
        self.wait_s = wait_s  # for the write lock; None: the brain's `write_wait_s`

    def __enter__(self) -> WriteBatch:
        db = self.db
        if db.readonly:
            raise ReadOnlyBrain(str(db.path), db.readonly_reason)
        db.lock.acquire()
        if db._batch is not None:  # nested: join the open transaction
            self.joined = True
            db._depth += 1
            return db._batch
        lost = db.check_file()  # a stat() now and then (FILE_CHECK_S)
        if lost is not None:
            db.lock.release()
            raise BrainFileLost(str(db.path), lost)
        batch = WriteBatch(batch_id=new_batch_id(), actor=self.actor, kind=self.kind)
        try:
            begin_immediate(db, self.operation, self.wait_s)
        except apsw.Error as exc:
            db.lock.release()
            log.exception("%s: could not begin a transaction", self.operation)
            if isinstance(exc, DAMAGED):
                raise db.damaged() from exc
            raise StorageError(self.operation) from exc
        except BaseException:
            db.lock.release()
            raise
        db._batch = batch
        return batch

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, _tb: object
    ) -> None:
        db = self.db
        try:
            if self.joined:
                db._depth -= 1
                return
            db._batch = None
            if exc_type is not None:
                if db.conn.in_transaction:  # SQLite rolls back by itself on a full disk
                    try:
                        db.conn.execute("ROLLBACK")
                    except apsw.Error:
                        log.exception("%s: rollback failed", self.operation)
                if isinstance(exc, DAMAGED):
                    log.error("%s: %s", self.operation, exc)
                    raise db.damaged() from exc
                if isinstance(exc, apsw.BusyError):
                    raise _busy(db, self.operation) from exc
                if isinstance(exc, STORAGE_FAILURES):
                    log.error("%s: %s", self.operation, exc)
                    raise StorageError(self.operation) from exc
                if (
                    isinstance(exc, apsw.ConstraintError)
                    and extended_code(exc) == apsw.SQLITE_CONSTRAINT_TRIGGER
                ):
                    raise _trigger_refused(db, self.operation, exc) from exc
                return  # the exception goes on
            try:
                db.conn.execute("COMMIT")
            except apsw.Error as exc:
                log.exception("%s: commit failed", self.operation)
                try:
                    db.conn.execute("ROLLBACK")
                except apsw.Error:
                    pass
                if isinstance(exc, apsw.BusyError):  # a rollback-journal brain's readers
                    raise _busy(db, self.operation) from exc
                raise StorageError(self.operation) from exc
            if db.checkpointer is not None and db.checkpointer.writer_must_checkpoint:
                db.checkpoint()
        finally:
            db.lock.release()


def _trigger_refused(db: Database, operation: str, exc: apsw.ConstraintError) -> RefusedByBrain:
    """A trigger's RAISE: memgui's own triggers never raise, so it is another program's."""
    names = ", ".join(db.foreign_triggers) or "unknown"
    log.error("%s: refused by a trigger memgui did not make (%s): %s", operation, names, exc)
    return RefusedByBrain(
        str(db.path), operation, f"a trigger memgui did not make ({names})", str(exc)
    )


def _busy(db: Database, operation: str) -> BrainBusy:
    """A statement of an open transaction that waited out the busy timeout (a brain in
    rollback-journal mode commits only once no one reads it)."""
    holder = busy.describe_holder(busy.write_lock_holder(db.path))
    return BrainBusy(str(db.path), operation, holder, BUSY_TIMEOUT_MS / 1000)


def begin_immediate(db: Database, operation: str, wait_s: float | None) -> None:
    """`BEGIN IMMEDIATE`, waiting up to `wait_s` (default `write_wait_s`) for another
    connection's write lock; past it, `BrainBusy` says who holds it, when that can be
    known. SQLite's busy handler does the waiting; the begin is retried on top, since a
    writer that ends and one that starts meanwhile both count as busy to it."""
    wait_s = db.write_wait_s if wait_s is None else wait_s
    deadline = time.monotonic() + wait_s
    short = wait_s * 1000 < BUSY_TIMEOUT_MS
    attempt = 0
    try:
        while True:
            if short:  # a wait shorter than the busy timeout
                left = deadline - time.monotonic()
                busy_wait.set_wait(db.conn, max(0, int(left * 1000)))
            try:
                db.conn.execute("BEGIN IMMEDIATE")
                return
            except apsw.BusyError:
                attempt += 1
                if time.monotonic() >= deadline:
                    # Not logged here: bookkeeping that finds the brain busy goes on
                    # without it, and a person's write says so itself.
                    holder = busy.describe_holder(busy.write_lock_holder(db.path))
                    raise BrainBusy(str(db.path), operation, holder, wait_s) from None
                time.sleep(min(0.05 * attempt, 0.5, max(0.0, deadline - time.monotonic())))
    finally:
        if short:
            busy_wait.set_wait(db.conn, BUSY_TIMEOUT_MS)
