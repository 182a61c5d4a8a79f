"""Agent activity on a shared brain (`core/activity.py`, the same rules as on a file): the
brain's side of it, which `SharedBrain` takes in. Reads run in one read-only snapshot of the
server; the review mark is written in the brain's ordinary write transaction, which takes
the brain's journal lock first (`storage/postgres_locks.hold_journal_order`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from memgui.core import activity
from memgui.core.activity import MarkWrite
from memgui.core.storage.postgres_activity import PostgresActivityRows

if TYPE_CHECKING:
    import psycopg

    from memgui.core.storage.transaction import WriteBatch


class SharedActivity(activity.ActivityReview):
    """The activity review's calls, as `Brain` has them (`activity.ActivityReview`)."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def writing(
        self, actor: str | None, kind: str = "edit", lock: str | None = None
    ) -> AbstractContextManager[WriteBatch]:
        raise NotImplementedError  # SharedBrain's

    def activity_rows(self) -> SharedActivityAccess:
        return SharedActivityAccess(self)


class SharedActivityAccess:
    def __init__(self, brain: SharedActivity) -> None:
        self.brain = brain

    @contextmanager
    def reading(self, purpose: str) -> Iterator[PostgresActivityRows]:
        conn = self.brain.conn
        with conn.transaction():  # the mark and the walk from one moment of the brain
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield PostgresActivityRows(conn, self.brain.brain_id)

    @contextmanager
    def writing(self, actor: str | None) -> Iterator[MarkWrite]:
        with self.brain.writing(actor, "review") as batch:
            done = MarkWrite(PostgresActivityRows(self.brain.conn, self.brain.brain_id, batch))
            yield done
        done.changes = batch.changes()
