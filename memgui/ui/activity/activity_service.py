"""Agent activity in the main window: the dock with the review panel, the status-bar badge
with the unreviewed count, and the edits the panel asks for.

The count is read by a small job (it reads the journal rows after the review mark, up to a
cap) whenever the journal moved: another program wrote (the live watcher says so within a
second), this window wrote, or an undo or redo ran. One count runs at a time; a change
meanwhile reads it once more after. The batches this window writes under another actor than
`gui` (an import) are its own: never listed, and marked reviewed as soon as they commit, so
they are not listed after a restart either.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QMenu, QToolButton

from memgui.core.activity import COUNT_CAP, PERSON_ACTORS
from memgui.core.errors import Conflict, MemguiError, NotFound
from memgui.core.model import Changes, Trace
from memgui.core.progress import Progress
from memgui.ui import commands as cmd
from memgui.ui.activity.activity_commands import MarkReviewedCommand, RevertChangesCommand
from memgui.ui.activity.activity_model import ActivityModel
from memgui.ui.activity.activity_panel import ActivityPanel
from memgui.ui.change_bus import EXTERNAL
from memgui.ui.jobs import Job
from memgui.ui.session import BrainSession

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

COUNT_JOB = "activity count"
REFRESH_MS = 100  # changes within this are read as one


def _count_job(session: BrainSession, exclude: frozenset[str]) -> Generator[Progress, None, int]:
    reader = session.open_reader()
    try:
        yield Progress(0, None, "counting unreviewed changes")
        return reader.unreviewed_count(exclude)
    finally:
        reader.close()


class ActivityBadge(QToolButton):
    """The status bar's 'Agent activity: N' button; a click shows or hides the panel."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("activity_badge")
        self.setAutoRaise(True)
        self.count = 0
        self.show_count(0)

    def show_count(self, count: int) -> None:
        self.count = count
        if count == 0:
            self.setText("Agent activity")
            self.setStyleSheet("")
            self.setToolTip("Nothing written by agents or other programs waits for review")
            return
        shown = f"{COUNT_CAP:,}+" if count >= COUNT_CAP else f"{count:,}"
        self.setText(f"Agent activity: {shown}")
        self.setStyleSheet("QToolButton { font-weight: bold; }")
        self.setToolTip(
            f"{shown} changes by agents and other programs wait for review (Ctrl+Shift+A)"
        )


class ActivityService(QObject):
    count_changed = Signal(int)

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.session: BrainSession | None = None
        self.model: ActivityModel | None = None
        self.count = 0
        self.own_batches: set[str] = set()
        self.panel = ActivityPanel()
        self.dock = QDockWidget("Agent activity", window)
        self.dock.setObjectName("activity_dock")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        self.dock.hide()
        self.toggle_action = self.dock.toggleViewAction()
        self.toggle_action.setText("&Agent activity")
        self.toggle_action.setShortcut("Ctrl+Shift+A")
        self.toggle_action.setStatusTip("What agents and other programs wrote, for review")
        self.badge = ActivityBadge()
        self.badge.clicked.connect(self.toggle_action.trigger)
        window.statusBar().addPermanentWidget(self.badge)
        self._count_job: Job | None = None
        self._count_again = False
        # What changed since the list was last read: the memories (None: any), and whether
        # the list must be read anew (it is not followed while the panel is hidden).
        self._touched: set[str] | None = set()
        self._stale = False
        self.dock.visibilityChanged.connect(self._on_visibility)
        self._refresh = QTimer(self)
        self._refresh.setSingleShot(True)
        self._refresh.setInterval(REFRESH_MS)
        self._refresh.timeout.connect(self.refresh_now)
        p = self.panel
        p.mark_requested.connect(self.mark_reviewed)
        p.mark_all_requested.connect(self.mark_all_reviewed)
        p.edit_requested.connect(self.edit)
        p.forget_requested.connect(self.forget)
        p.revert_requested.connect(self.revert)
        window.session_changed.connect(self._on_session_changed)

    # --- the session -------------------------------------------------------------------------

    def _on_session_changed(self) -> None:
        session = self.window.session
        if session is not self.session:
            self._attach(session)

    def _attach(self, session: BrainSession | None) -> None:
        self._refresh.stop()
        self.session, self.own_batches = session, set()
        self._touched, self._stale = set(), False
        old, self.model = self.model, None
        if session is None:
            self.panel.set_model(None, None)
            self._show_count(0)
        else:
            self.model = ActivityModel(session.brain, lambda: frozenset(self.own_batches), self)
            self.panel.set_model(self.model, session.brain, session.read_only)
            session.bus.changed.connect(self._on_changes)
            session.closing.connect(lambda: self._attach(None))
            session.undo_stack.indexChanged.connect(lambda _i: self.schedule())
            if self.window.watcher is not None:
                self.window.watcher.journal_moved.connect(self.schedule)
            self.recount()
        if old is not None:
            old.deleteLater()

    def _on_visibility(self, visible: bool) -> None:
        if visible and self._stale:
            self.refresh_now()

    def _on_changes(self, changes: Changes, initiator: object) -> None:
        if changes.kind == "reset":
            self._touched = None
        elif self._touched is not None:
            self._touched |= changes.traces
        own = initiator is not EXTERNAL and changes.batch_id
        if own and changes.actor not in PERSON_ACTORS and changes.kind != "review":
            # This window's import (written as import:<format>): its own, reviewed at once.
            self.own_batches.add(changes.batch_id)
            self._review_own(changes.batch_id)
        self.schedule()

    def _review_own(self, batch_id: str) -> None:
        session = self.session
        if session is None or session.read_only:
            return
        try:
            changes = session.brain.mark_reviewed([batch_id])
        except MemguiError as exc:  # a busy brain: it shows up for review, no harm done
            self.window.show_error(f"Could not mark this window's own import reviewed: {exc}")
            return
        session.publish(changes, self)  # this window's own: live refresh passes it by

    def schedule(self) -> None:
        """Read the list and the count again soon (changes close together: once)."""
        if self.session is not None:
            self._refresh.start()

    def refresh_now(self) -> None:
        """Read the count again, and the list while the panel shows it (else once it does)."""
        if self.model is None:
            return
        self.recount()
        if not self.dock.isVisible():
            self._stale = True  # the hidden list is not followed: nothing on the GUI thread
            return
        touched, self._touched = self._touched, set()
        try:
            if self._stale:
                self._stale = False
                self.model.reload()
            else:
                self.model.refresh(touched)
        except MemguiError as exc:
            self.panel.show_problem(f"Could not read the activity: {exc}")
        self.panel.update_details()

    def recount(self) -> None:
        session = self.session
        if session is None:
            return
        if self._count_job is not None:
            self._count_again = True
            return
        job = self.window.query_runner.start(
            COUNT_JOB, lambda: _count_job(session, frozenset(self.own_batches))
        )
        self._count_job = job
        job.finished.connect(lambda count: self._on_counted(session, count))
        job.failed.connect(lambda _exc: self._on_counted(session, None))
        job.cancelled.connect(lambda: self._on_counted(session, None))

    @property
    def counting(self) -> bool:
        return self._count_job is not None or self._count_again

    def _on_counted(self, session: BrainSession, count: int | None) -> None:
        self._count_job = None
        if session is not self.session:
            return
        if count is not None:
            self._show_count(count)
        if self._count_again:
            self._count_again = False
            self.recount()

    def _show_count(self, count: int) -> None:
        self.count = count
        self.badge.show_count(count)
        self.panel.show_count(count, count >= COUNT_CAP)
        self.count_changed.emit(count)

    # --- what the panel asks -----------------------------------------------------------------

    def _push(self, command: cmd.CoreCommand) -> bool:
        if self.session is None:
            return False
        try:
            cmd.push(self.session, command)
        except Conflict as exc:
            self.panel.show_problem(f"Not reverted: {exc}. Nothing was overwritten.")
            if self._touched is not None:
                self._touched.add(exc.trace_id)
            self.refresh_now()  # the change's row now says what changed since
            return False
        except MemguiError as exc:
            self.panel.show_problem(str(exc))
            return False
        self.panel.show_problem("")
        self.refresh_now()
        return True

    def mark_reviewed(self, batch_ids: list[str]) -> None:
        if self.session is not None and self._push(MarkReviewedCommand(self.session, batch_ids)):
            self.window.show_message("Marked reviewed (Ctrl+Z takes it back)")

    def mark_all_reviewed(self) -> None:
        if self.session is None or self.model is None or not self.model.newest_id():
            return
        # Up to the newest change listed: what arrives meanwhile stays for review.
        command = MarkReviewedCommand(self.session, through=self.model.newest_id())
        if self._push(command):
            self.window.show_message("Marked all reviewed (Ctrl+Z takes it back)")

    def revert(self, batch_id: str, actor: str, entry_ids: list[int] | None) -> None:
        if self.session is None:
            return
        command = RevertChangesCommand(self.session, batch_id, actor, entry_ids)
        if self._push(command):
            self.window.show_message(f"{command.text()} (Ctrl+Z undoes)")

    def _trace(self, trace_id: str) -> Trace | None:
        """The memory as it is now, or None (said in the panel) when it is gone."""
        if self.session is None:
            return None
        try:
            return self.session.brain.get(trace_id)
        except NotFound:
            self.panel.show_problem(f"{trace_id} is no longer in the brain")
            return None

    def forget(self, trace_id: str) -> None:
        session, trace = self.session, self._trace(trace_id)
        if session is None or trace is None:
            return
        if trace.deleted:
            self.window.show_message(f"{trace_id} is in the trash already")
            return
        if self._push(cmd.SetDeletedCommand(session, [trace_id], True)):
            self.window.show_message("Moved to the trash: 1 memory (Ctrl+Z undoes)")

    def edit(self, trace_id: str) -> None:
        """Show the memory in the editor: its row in the table, else the memory alone."""
        window, session = self.window, self.session
        if session is None:
            return
        window.pages.setCurrentWidget(window.splitter)
        if window.select_id(trace_id):
            window.detail.editor.content.setFocus()
            return
        if not window.edits.settle_unsaved_edit():
            return
        trace = self._trace(trace_id)
        if trace is None:
            return
        window.table.clearSelection()
        window.detail.show_trace(session.brain, trace)
        window.detail.editor.content.setFocus()
        window.show_message("This memory is not in the table's list; it is shown alone")


def install_activity(window: MainWindow) -> ActivityService:
    """The Agent activity dock, its View menu entry and its status-bar badge."""
    service = ActivityService(window)
    menus = [action.menu() for action in window.menuBar().actions()]
    view_menu = next((m for m in menus if isinstance(m, QMenu) and m.title() == "&View"), None)
    if view_menu is not None:
        view_menu.addAction(service.toggle_action)
    else:
        window.menuBar().addAction(service.toggle_action)
    return service
