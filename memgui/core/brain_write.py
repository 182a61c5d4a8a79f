"""`Brain.write`: one transaction and journal batch of a brain, as a context manager, and
`BrainContext`, the part of a brain that the facade's helpers use.

Before the transaction, an older brain is migrated; inside it, a brain's first write records
its meta rows; at its end, the full-text indexes are flushed once enough rows wait; when it
ends, `changes` holds what this write changed (a write nested in a batch: what it changed
itself). A class rather than a generator context manager: every add opens one, and the
generator machinery alone cost ~5 µs of a ~150 µs add.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from memgui.core.changes import Changes
from memgui.core.search import fulltext, stems
from memgui.core.storage import store
from memgui.core.storage.db import WriteBatch

if TYPE_CHECKING:
    from memgui.core.storage.db import Database


UNFINISHED = Changes(kind="unfinished")  # `BrainWrite.changes` until the write ends


class BrainContext(Protocol):
    """A brain as the facade's helpers (traces, links, graph, scopes, journal) see it: its
    connection, its id, who writes, its clock, and a write transaction. `Brain` is one; the
    helpers reach nothing else of it."""

    @property
    def db(self) -> Database: ...

    @property
    def brain_id(self) -> str: ...

    @property
    def actor(self) -> str: ...

    def now(self) -> int: ...

    def write(
        self,
        operation: str,
        kind: str = "edit",
        actor: str | None = None,
        wait_s: float | None = None,
    ) -> BrainWrite: ...


class Batch(str):
    """`Brain.batch()`: the open batch's journal id — a `str`, so code that takes the id
    goes on as it was — and, once the batch committed, what its calls changed together
    (`changes`)."""

    changes: Changes

    def __new__(cls, batch_id: str, kind: str) -> Batch:
        handle = super().__new__(cls, batch_id)
        handle.changes = Changes(kind=kind)
        return handle

    @property
    def batch_id(self) -> str:
        return str(self)


class BrainWrite:
    __slots__ = (
        "brain", "operation", "kind", "actor", "outer", "transaction", "batch", "backup",
        "migrating", "marking", "wait_s", "joined_at", "changes",
    )  # fmt: skip

    def __init__(
        self,
        brain: BrainContext,
        operation: str,
        kind: str,
        actor: str | None,
        wait_s: float | None = None,
    ) -> None:
        self.wait_s = wait_s
        self.brain = brain
        self.operation = operation
        self.kind = kind
        self.actor = actor
        self.backup: Path | None = None
        self.migrating = False
        self.marking = False
        self.joined_at = 0  # the batch's events before this write (a write nested in a batch)
        # What this write changed, once it ended without an error (`core/changes.py`).
        self.changes: Changes = UNFINISHED

    def __enter__(self) -> WriteBatch:
        brain, db = self.brain, self.brain.db
        self.outer = not db.in_write
        if self.outer and not db.is_current:
            # An older brain migrates in the first write's own transaction: a write that is
            # refused (an unknown id, a stale version) rolls the migration back with it.
            self.backup = db.prepare_migration()
            self.migrating = self.backup is not None
        self.transaction = db.write(
            self.actor or brain.actor, self.operation, self.kind, self.wait_s
        )
        try:
            self.batch = self.transaction.__enter__()
        except BaseException:
            self._rolled_back()
            raise
        self.joined_at = len(self.batch.events)
        self.marking = self.outer and brain.brain_id not in db.meta_written
        if self.migrating or self.marking:
            try:
                if self.migrating and not db.apply_migration(
                    db.brain_ids() or [brain.brain_id],
                    lambda: fulltext.index_all(db),
                    lambda: stems.create_and_fill(db),
                ):
                    self._discard_backup()  # another process migrated it meanwhile
                if self.marking:
                    # A brain id's meta rows are written on its first write, never on open.
                    db.ensure_triggers()
                    store.mark_brain(db, brain.brain_id, brain.now())
            except BaseException as exc:
                self._fail(exc)
                raise
        return self.batch

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        db = self.brain.db
        if exc_type is None and self.outer:
            try:
                # Batched, unless another program writes this brain too: it keeps AgentOS's
                # index current at every write, and a lagging share of memgui's made its
                # index inconsistent (a rebuild of it included rows memgui then added again).
                if fulltext.flush_due(db):
                    fulltext.flush_in_transaction(db)
                if self.backup is not None:
                    # Named before the commit: a committed migration always has its backup.
                    db.keep_backup(self.backup)
                    self.backup = None
            except BaseException as error:
                self._fail(error)
                raise
        try:
            self.transaction.__exit__(exc_type, exc, tb)
        except BaseException:
            self._rolled_back()
            raise
        if exc_type is not None:
            self._rolled_back()
            return
        if self.marking:
            db.meta_written.add(self.brain.brain_id)
        self.changes = self.batch.changes(self.joined_at)

    def _fail(self, exc: BaseException) -> None:
        try:
            self.transaction.__exit__(type(exc), exc, exc.__traceback__)
        finally:
            self._rolled_back()

    def _discard_backup(self) -> None:
        if self.backup is not None:
            self.backup.unlink(missing_ok=True)
            self.backup = None

    def _rolled_back(self) -> None:
        """The transaction did not commit: no backup stays, and the schema is as it was."""
        self._discard_backup()
        if self.migrating or self.marking:  # either may have made tables or triggers
            self.brain.db.refresh_schema_state()
