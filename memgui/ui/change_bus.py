"""One signal that tells every view what changed in the open brain.

Undo commands, finished jobs and the live-refresh watcher all publish the core's
`Changes` here; each model decides for itself whether to refresh rows, insert them or
reset. `initiator` is the object that caused the change (a command, a view, the watcher)
so a view can skip reacting to its own edit.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from memgui.core.model import Changes

EXTERNAL = "external"  # the initiator of a change another process made


class ChangeBus(QObject):
    changed = Signal(object, object)  # (Changes, initiator)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._own_batches: set[str] = set()

    def publish(self, changes: Changes | None, initiator: object = None) -> None:
        """Announce a change made by this process (None and empty changes are ignored)."""
        if changes is None:
            return
        if changes.batch_id:
            self._own_batches.add(changes.batch_id)
        if changes or changes.kind == "reset":  # an edge alone is a change too
            self.changed.emit(changes, initiator)

    def publish_external(self, changes: Changes) -> None:
        """Announce a change another process made (read from the journal)."""
        self.changed.emit(changes, EXTERNAL)

    def is_own_batch(self, batch_id: str) -> bool:
        """True when this process published the batch (live refresh skips it)."""
        return batch_id in self._own_batches
