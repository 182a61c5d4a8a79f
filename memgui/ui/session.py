"""One open brain in the window: the core facade, the change bus and the undo stack.

Every mutation goes through `record()`, which notes the `Changes` the core reports for the
call (the core tells its subscribers after each commit) so an undo command knows the
journal batch it made; each `Changes` is also published on the bus for the views.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.core.model import Changes
from memgui.ui.change_bus import ChangeBus

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
        self._recording: list[Changes] | None = None
        self._recording_thread: int | None = None
        self._initiator: object = None
        self._writers = 0  # writes of this window running on connections of their own
        self._writers_lock = threading.Lock()
        # Asked once before this window's first write migrates an older brain (an AgentOS
        # brain): what changes and where the backup goes. None: the window asks nobody.
        self.ask_migration: Callable[[Any], bool] | None = None
        self._migration_settled = brain.read_only or brain.pending_migration() is None
        brain.subscribe(self._on_core_changes)

    @classmethod
    def open(
        cls, path: str | Path, brain_id: str | None = None, create: bool = True, **kwargs: Any
    ) -> BrainSession:
        return cls(Brain.open(path, brain_id, actor=ACTOR, create=create), **kwargs)

    @property
    def path(self) -> Path:
        return self.brain.path

    @property
    def brain_id(self) -> str:
        return self.brain.brain_id

    @property
    def read_only(self) -> bool:
        return self.brain.read_only

    def open_reader(self) -> Brain:
        """A second connection on the same file, for reads off the GUI thread."""
        return Brain.open(self.path, self.brain_id, actor=ACTOR, create=False)

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

    @property
    def writes_in_flight(self) -> bool:
        return self._writers > 0

    def close(self) -> None:
        self.closing.emit()
        self.undo_stack.clear()
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

    def record(self, call: Callable[[], T], initiator: object = None) -> tuple[T, list[Changes]]:
        """Run one core mutation; return its result and the `Changes` it committed."""
        outer = self._recording is None
        if outer and not self.agree_to_migration():
            raise MigrationDeclined()
        if outer:
            self._recording = []
            self._recording_thread = threading.get_ident()
        previous_initiator, self._initiator = self._initiator, initiator
        try:
            result = call()
            recorded = list(self._recording)
        finally:
            self._initiator = previous_initiator
            if outer:
                self._recording = None
                self._recording_thread = None
        return result, recorded

    def record_batch(self, call: Callable[[], T], initiator: object = None) -> tuple[T, str]:
        """Run several core calls as one journal batch; return the result and the batch id."""

        def in_batch() -> T:
            with self.brain.batch(actor=ACTOR, kind="edit"):
                return call()

        result, recorded = self.record(in_batch, initiator)
        # A batch that touched nothing (a tag nobody had) has no journal rows to revert.
        touched = [c for c in recorded if c.traces or c.links or c.nodes]
        return result, touched[-1].batch_id if touched else ""

    def _on_core_changes(self, changes: Changes) -> None:
        # Called by the core after each commit, in the thread that wrote.
        if self._recording is not None and self._recording_thread == threading.get_ident():
            self._recording.append(changes)
        self.bus.publish(changes, self._initiator)
