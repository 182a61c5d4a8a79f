"""A shared brain's transactions: one per write with its journal batch, `batch()` grouping
several calls in one, and the connection made again when the server dropped it
(`shared_reconnect.py` says how no write is lost or half-applied). `SharedBrain` takes
these in."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memgui.core import shared_reconnect
from memgui.core.brain_write import Batch
from memgui.core.errors import BrainDeadlocked, InvalidArgument, PostgresUnavailable
from memgui.core.storage import postgres, postgres_locks, postgres_notify
from memgui.core.storage.transaction import WriteBatch, new_batch_id

if TYPE_CHECKING:
    import psycopg

    from memgui.core.storage.engine import PostgresAddress

NOT_WRITTEN = "nothing was written"


class SharedTransactions:
    """Mixed into `SharedBrain`, which sets these in its constructor."""

    conn: psycopg.Connection[tuple[Any, ...]]
    address: PostgresAddress
    brain_id: str
    actor: str
    marked: bool  # whether this brain id's meta rows are written (its first write does)
    backend_pid: int
    connect: Callable[[], psycopg.Connection[tuple[Any, ...]]] | None
    calls_open: int
    clock: Callable[[], int]
    _open_batch: WriteBatch | None

    def now(self) -> int:
        return self.clock()

    @property
    def in_batch(self) -> bool:
        return self._open_batch is not None

    def ensure_connected(self) -> None:
        """A new connection if the last one was lost (`PostgresUnavailable` while the
        server cannot be reached); the change listener then takes the new one's writes
        for this brain's own, as it did the old one's."""
        if not self.conn.closed:
            return
        if self.connect is None:
            raise PostgresUnavailable(
                f"the connection to the PostgreSQL brain {self.address} was lost"
            )
        fresh = self.connect()
        postgres_notify.note_replaced(self.backend_pid, fresh.info.backend_pid)
        self.conn, self.backend_pid = fresh, fresh.info.backend_pid

    @contextmanager
    def batch(self, actor: str | None = None, kind: str = "batch") -> Iterator[Batch]:
        """Group several calls in one transaction and one journal batch (revertible as one).
        Each call in it returns what it changed itself; once the batch committed, its
        `changes` hold what they changed together (empty, with no batch id, if nothing)."""
        with self.writing(actor, kind) as open_batch:
            handle = Batch(open_batch.batch_id, kind)
            self._open_batch = open_batch
            try:
                yield handle
            finally:
                self._open_batch = None
        handle.changes = open_batch.changes()

    @contextmanager
    def writing(
        self,
        actor: str | None,
        kind: str = "edit",
        lock: str | None = None,
        order_late: bool = False,
    ) -> Iterator[WriteBatch]:
        """One transaction and its journal batch; with `lock` (the operation's name), it
        holds the brain id's advisory lock, refused if another long operation holds it.

        The brain's journal lock (`postgres_locks.hold_journal_order`) is taken first; with
        `order_late`, just before the first journal row instead (`postgres_journal`), for a
        write of one trace that locks its row first and no other after: its reads and checks
        then overlap other writers'. A write that locks rows after journaling (a merge, a
        revert) can then deadlock with it; the server ends one of the two, which is made
        again (`shared_reconnect`)."""
        import psycopg

        joined = self._open_batch
        if joined is not None:  # a call inside `batch()`: its transaction and journal batch
            own = WriteBatch(batch_id=joined.batch_id, actor=joined.actor, kind=joined.kind)
            yield own  # (what this call changed: its own events)
            joined.events.extend(own.events)
            return
        self.ensure_connected()
        batch = WriteBatch(batch_id=new_batch_id(), actor=actor or self.actor, kind=kind)
        committing = False
        turns: list[bool] = []

        def take_turn() -> None:
            # The brain's journal ids then commit in their order (postgres_locks); a first
            # write marks the brain's meta rows after it, whose row locks would otherwise
            # deadlock two first writes.
            postgres_locks.hold_journal_order(self.conn, self.brain_id)
            if not self.marked:
                postgres.mark_brain(self.conn, self.brain_id, self.now())
            turns.append(True)

        try:
            with self.conn.transaction():
                if order_late:
                    batch.before_first_row = take_turn
                else:
                    take_turn()
                if lock is not None:
                    postgres_locks.hold(self.conn, self.brain_id, lock, str(self.address))
                yield batch
                committing = True
        except psycopg.OperationalError as exc:
            if shared_reconnect.deadlocked(exc) and not self.calls_open:
                raise BrainDeadlocked(str(self.address), kind) from exc  # no call to retry
            if not shared_reconnect.lost(self.conn, exc):
                raise
            if not committing:  # the server rolled it back with the connection
                if self.calls_open:
                    raise  # the call reconnects and is made again (`shared_reconnect`)
                raise shared_reconnect.unreachable(self.address, exc, NOT_WRITTEN) from exc
            self._after_lost_commit(batch, exc)
        except psycopg.DataError as exc:  # what the checks let through and Postgres refuses
            raise InvalidArgument(
                "value",
                f"PostgreSQL refuses it ({exc.diag.message_primary or exc}); nothing was written",
            ) from exc
        self.marked = self.marked or bool(turns)  # (a late write that journaled nothing)

    def _after_lost_commit(self, batch: WriteBatch, exc: BaseException) -> None:
        """The COMMIT was sent and its answer lost: whether it landed is read on a new
        connection (its journal batch). Returns if it did; raises if not, or if unknown."""
        try:
            self.ensure_connected()
            done = bool(batch.events) and shared_reconnect.landed(
                self.conn, self.brain_id, batch.batch_id
            )
        except PostgresUnavailable as down:
            raise PostgresUnavailable(
                f"{down}; whether the last write (journal batch {batch.batch_id}) was "
                "committed is unknown: look for it in the history once the server is back"
            ) from exc
        if done:
            return
        if self.calls_open:
            raise exc  # not written: the call is made again on the new connection
        raise shared_reconnect.unreachable(self.address, exc, NOT_WRITTEN) from exc
