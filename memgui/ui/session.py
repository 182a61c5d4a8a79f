"""One open brain in the window: the core facade, the change bus and the undo stack.

Every core mutation returns what it changed (`Changes`: the traces, links and graph rows,
and the journal batch). An undo command keeps the batch id from that return, and whoever
made the change publishes the same `Changes` on the bus for the views.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.model import Changes
from memgui.ui.change_bus import ChangeBus

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain

T = TypeVar("T")
ACTOR = "gui"


class MigrationDeclined(MemguiError):
    """The person kept an older brain (an AgentOS brain) as it is: nothing was written."""

    def __init__(self) -> None:
        super().__init__(
            "Nothing was changed: the brain stays as it is until you let memgui migrate it"
        )


class BrainSession(QObject):
    """Owns the `Brain` while it is open; closed when the window opens another one."""

    error_reported = Signal(str)  # a core error an undo/redo step could not avoid
    closing = Signal()  # the window is about to close this brain: views of it must go

    def __init__(self, brain: Brain, parent: QObject | None = None, temporary: bool = False):
        super().__init__(parent)
        self.brain = brain
        self.temporary = temporary  # a copy (the sample brain): not added to Open Recent
        self.bus = ChangeBus(self)
        self.undo_stack = QUndoStack(self)
        self._writers = 0  # writes of this window running on connections of their own
        self._writers_lock = threading.Lock()
        # Asked once before this window's first write migrates an older brain (an AgentOS
        # brain): what changes and where the backup goes. None: the window asks nobody.
        self.ask_migration: Callable[[Any], bool] | None = None
        self._migration_settled = brain.read_only or brain.pending_migration() is None
        # A shared brain (PostgreSQL): its address, and the password the person typed, kept
        # in memory only for this session's second connections. None: a brain file.
        self.shared_address: str | None = None
        self._password: str | None = None
        # The server processes of this window's other connections to a shared brain that
        # write (an import's commit, the embedding job): their change notices are this
        # window's own, which it has published itself (`note_own_connection`).
        self.own_pids: set[int] = set()

    @classmethod
    def of_shared(
        cls, brain: SharedBrain, password: str | None = None, **kwargs: Any
    ) -> BrainSession:
        """A session on a shared brain. Its `brain` (`SharedBrain`) answers what the window
        asks of a brain file, on the server."""
        session = cls(cast(Brain, brain), **kwargs)
        session.shared_address = str(brain.address)
        session._password = password
        return session

    @property
    def password(self) -> str | None:
        """The password typed for this shared brain (memory only), or None."""
        return self._password

    @property
    def shared(self) -> bool:
        """On a shared brain (PostgreSQL), not a file."""
        return self.shared_address is not None

    @property
    def name(self) -> str:
        """What the title names the brain by: the file's name, or the shared brain's address."""
        return self.shared_address or self.path.name

    @property
    def where(self) -> str:
        """The file's path, or the shared brain's address (never its password)."""
        return self.shared_address or str(self.path)

    @classmethod
    def open(
        cls, path: str | Path, brain_id: str | None = None, create: bool = True, **kwargs: Any
    ) -> BrainSession:
        return cls(Brain.open(path, brain_id, actor=ACTOR, create=create), **kwargs)

    @property
    def path(self) -> Path:
        """The brain file (a shared brain's: its address as a path no file has)."""
        if self.shared_address is not None:
            return Path(self.shared_address)
        return self.brain.path

    @property
    def brain_id(self) -> str:
        return self.brain.brain_id

    @property
    def read_only(self) -> bool:
        return self.brain.read_only

    def open_reader(self) -> Brain:
        """A second connection on the same brain, for reads off the GUI thread."""
        if self.shared_address is not None:
            from memgui.core.shared_brain import SharedBrain

            shared = SharedBrain.open(self.shared_address, actor=ACTOR, password=self._password)
            return cast(Brain, shared)
        reader = Brain.open(self.path, self.brain_id, actor=ACTOR, create=False)
        # As the window's own: its searches match marked rows without indexing them.
        reader.index_later(self.brain.indexes_later)
        return reader

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around a write of this window on another connection (an import's commit, in a
        worker). Its rows are committed a moment before the core announces them as this
        window's batch; live refresh waits meanwhile rather than read them as another
        program's (and refresh the table for them, a page at a time)."""
        with self._writers_lock:
            self._writers += 1
        try:
            yield
        finally:
            with self._writers_lock:
                self._writers -= 1

    def note_own_connection(self, brain: object) -> None:
        """`brain` (a shared brain's connection in a job) writes for this window: the live
        refresh takes its change notices as this window's own (called in the job)."""
        conn = getattr(brain, "conn", None)
        pid = getattr(getattr(conn, "info", None), "backend_pid", None)
        if isinstance(pid, int):
            self.own_pids.add(pid)

    @property
    def writes_in_flight(self) -> bool:
        return self._writers > 0

    def close(self) -> None:
        self.closing.emit()
        self.undo_stack.clear()
        if not self.shared:
            # What the upkeep had not indexed yet (a few rows at most) is indexed now, so
            # that another program's index (AgentOS's) holds every row once memgui is gone.
            self.brain.index_later(False)
        self.brain.close()

    # --- mutations ----------------------------------------------------------------------

    @property
    def migration_pending(self) -> bool:
        """This brain's first write will migrate it, and nobody has agreed to that yet."""
        return not self._migration_settled

    def agree_to_migration(self) -> bool:
        """Before a write of this window: an older brain is migrated only once the person
        has been told what changes and where the backup goes, and agreed (once per brain).
        False when they keep it as it is."""
        if self._migration_settled:
            return True
        plan = self.brain.pending_migration()
        if plan is not None and self.ask_migration is not None and not self.ask_migration(plan):
            return False
        self._migration_settled = True
        return True

    def check_may_write(self) -> None:
        """Before a write of this window: `MigrationDeclined` when the person keeps an
        older brain as it is (see `agree_to_migration`)."""
        if not self.agree_to_migration():
            raise MigrationDeclined()

    def batched(self, call: Callable[[], T]) -> tuple[T, Changes]:
        """Run several core calls as one journal batch of this window: the result, and what
        they changed together (a batch that changed nothing — a tag nobody had — has no
        batch id: nothing to revert)."""
        self.check_may_write()
        with self.brain.batch(actor=ACTOR, kind="edit") as batch:
            result = call()
        return result, batch.changes

    def publish(self, changes: Changes, initiator: object = None) -> None:
        """Tell the views what a mutation of this window changed (its return)."""
        self.bus.publish(changes, initiator)
