"""Keeps the detail pane on the memory the table points at, and in step with changes.

Moving to another row first settles an unsaved edit; Cancel puts the table back on the
memory being edited, so that the selection actions (Ctrl+T, Del, Ctrl+M) act on it. A change
to the shown memory refreshes the editor without losing what the person typed: another
program's change is flagged, this window's own (an undo) is taken in quietly, and a memory
removed from the brain leaves its unsaved text to be saved as a new memory or discarded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QObject, QTimer

from memgui.core.model import EDITABLE_FIELDS, Changes, Trace
from memgui.ui.commands import CoreCommand

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.ui.main_window import MainWindow

OWN_ACTOR = "this window"


class ShownTrace(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self._going_back = False  # the table is being put back on the edited memory

    def on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        window = self.window
        if window.session is None or window.model is None or self._going_back:
            return
        trace = window.model.trace_at(current.row()) if current.isValid() else None
        shown = window.detail.trace
        if trace is not None and shown is not None and trace.id == shown.id:
            return
        if not window.edits.settle_unsaved_edit():
            # Later, not now: a click tells of the new current row first and selects the
            # row afterwards, which would undo a move made here.
            QTimer.singleShot(0, self._back_to_edited)
            return
        window.detail.show_trace(window.session.brain, trace)
        window.update_actions()

    def _back_to_edited(self) -> None:
        window = self.window
        if window.model is None or window.table.selectionModel() is None:
            return
        shown = window.detail.trace
        self._going_back = True
        try:
            if shown is None or not window.select_id(shown.id):
                window.table.selectionModel().clear()  # a new memory has no row of its own
        finally:
            self._going_back = False
        window.update_actions()

    def on_changes(self, changes: Changes, initiator: object) -> None:
        window = self.window
        shown = window.detail.trace
        if window.session is None or shown is None:
            return
        brain = window.session.brain
        own = isinstance(initiator, CoreCommand)
        actor = OWN_ACTOR if own else changes.actor
        if changes.kind == "reset":
            self._reread(brain, shown, actor)
        elif shown.id in changes.traces:
            self._refresh(brain, shown, actor, own)
        window.update_actions()

    def _refresh(self, brain: Brain, shown: Trace, actor: str, own: bool) -> None:
        window = self.window
        detail = window.detail
        fresh = brain.get_many([shown.id]).get(shown.id)
        if fresh is None:
            self._gone(brain, actor)
            return
        in_view = fresh.deleted == window.filter_bar.trash_check.isChecked()
        if not in_view and not detail.editor.dirty:
            # Gone from this view (trashed, restored): the editor does not keep offering a
            # memory the table no longer lists.
            detail.show_trace(brain, None)
        elif own and detail.editor.dirty:
            detail.own_change(fresh)
        else:
            detail.trace_changed(fresh, actor)

    def _gone(self, brain: Brain, actor: str) -> None:
        """Purged: unsaved text stays (flagged) for the person to save anew or discard."""
        if not self.window.detail.trace_gone(actor):
            self.window.detail.show_trace(brain, None)

    def _reread(self, brain: Brain, shown: Trace, actor: str) -> None:
        """Another program changed the brain without saying what (no journal rows: AgentOS
        itself, or a brain not migrated yet): read the shown memory again, one row."""
        window = self.window
        fresh = brain.get_many([shown.id]).get(shown.id)
        editor = window.detail.editor
        if fresh is None:
            self._gone(brain, actor)
        elif fresh.version != shown.version:
            window.detail.trace_changed(fresh, actor)
        elif _edited_fields(fresh) != _edited_fields(shown) and not editor.dirty:
            window.detail.show_trace(brain, fresh)  # a write that kept the version
        else:
            window.detail.mark_stale()


def _edited_fields(trace: Trace) -> tuple[object, ...]:
    """What an edit changes (strength is computed at each read, so it is left out)."""
    return tuple(getattr(trace, name) for name in (*EDITABLE_FIELDS, "expires_at", "deleted"))
