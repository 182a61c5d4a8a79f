"""`Brain.write`: one transaction and journal batch of a brain, as a context manager.

Before the transaction, an older brain is migrated; inside it, a brain's first write records
its meta rows; at its end, the full-text indexes are flushed once enough rows wait; after the
commit, subscribers hear what changed. A class rather than a generator context manager:
every add opens one, and the generator machinery alone cost ~5 µs of a ~150 µs add.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memgui.core.search import fulltext
from memgui.core.storage.db import WriteBatch

if TYPE_CHECKING:
    from memgui.core.brain import Brain


class BrainWrite:
    __slots__ = (
        "brain", "operation", "kind", "actor", "outer", "transaction", "batch", "backup",
        "migrating", "marking", "wait_s",
    )  # fmt: skip

    def __init__(
        self,
        brain: Brain,
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
        self.marking = self.outer and not brain._meta_written
        if self.migrating or self.marking:
            try:
                if self.migrating and not db.apply_migration(
                    db.brain_ids() or [brain.brain_id], lambda: fulltext.index_all(db)
                ):
                    self._discard_backup()  # another process migrated it meanwhile
                if self.marking:
                    db.ensure_triggers()
                    brain._mark_brain(self.batch)
            except BaseException as exc:
                self._fail(exc)
                raise
        return self.batch

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        db = self.brain.db
        if exc_type is None and self.outer:
            try:
                # Batched, unless another program writes this brain too: it keeps AgentOS's
                # index current at every write, and a lagging share of memgui's made its
                # index inconsistent (a rebuild of it included rows memgui then added again).
                if db.pending_marks and (
                    db.pending_marks >= fulltext.FLUSH_AFTER or db.is_shared()
                ):
                    fulltext.flush_in_transaction(db)
                if self.backup is not None:
                    # Named before the commit: a committed migration always has its backup.
                    db.keep_backup(self.backup)
                    self.backup = None
            except BaseException as exc:
                self._fail(exc)
                raise
        try:
            self.transaction.__exit__(exc_type, *rest)
        except BaseException:
            self._rolled_back()
            raise
        if exc_type is not None:
            self._rolled_back()
            return
        if self.marking:
            self.brain._meta_written = True
        if self.outer and self.brain._listeners:
            # Building the change set costs ~5 µs: only when someone listens.
            self.brain._notify(self.batch.changes())

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
