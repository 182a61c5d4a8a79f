"""The main window: search and filters over the trace table, the detail pane beside it.

It owns one `BrainSession` at a time (File ▸ Open swaps it), routes the change bus to the
table and the detail pane, and keeps the status bar's counts. Edits live in
`window_edits.py`, opening brains in `brain_files.py`, and how the detail pane follows the
table and the changes in `shown_trace.py`. Its widgets are built in `window_frame.py`, its
selection and counts kept in `table_selection.py` (the classes it builds on).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent, QUndoGroup

from memgui.core.model import Changes, TraceFilter
from memgui.ui.actions import build_actions
from memgui.ui.activity.activity_service import install_activity
from memgui.ui.commands import SetDeletedCommand
from memgui.ui.consolidation.consolidation_action import install_consolidation
from memgui.ui.dialogs.help_dialogs import install_help
from memgui.ui.graph.graph_opening import install_graph
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.models.trace_queries import QueryOutcome
from memgui.ui.models.trace_table_model import TraceTableModel
from memgui.ui.semantic.backfill import install_semantic
from memgui.ui.session import BrainSession
from memgui.ui.theme import colours
from memgui.ui.theme.icons import icon
from memgui.ui.window.brain_files import BrainFiles
from memgui.ui.window.brain_tips import foreign_triggers_tip, read_only_tip
from memgui.ui.window.context_menus import ContextMenus
from memgui.ui.window.import_export_actions import install_import_export
from memgui.ui.window.live_refresh import LiveWatcher
from memgui.ui.window.shared_brains import SharedBrainLive, install_shared_brains, watch_shared
from memgui.ui.window.shared_limits import SharedLimits
from memgui.ui.window.shown_trace import ShownTrace
from memgui.ui.window.table_selection import TableSelection
from memgui.ui.window.view_summary import ViewSummary
from memgui.ui.window.why_line import install_why_line
from memgui.ui.window.window_edits import WindowEdits
from memgui.ui.window.window_layout import WindowLayout

COUNTS_DEBOUNCE_MS = 400
# A worker running Python keeps the GIL for a whole switch interval each time the GUI
# thread lets go of it, and a paint lets go at every `data()` call: at the default 5 ms,
# a query job reading 1M ids stretched paints to 150–300 ms.
GIL_SWITCH_INTERVAL_S = 0.001
# Quick reads the status bar does not announce.
QUIET_JOBS = ("query", "counts", "ollama status", "similar")


class MainWindow(TableSelection):
    session_changed = Signal()  # another brain is shown (or none): its model is in place

    def __init__(self, settings: QSettings | None = None, live: bool = True) -> None:
        super().__init__()
        self.settings = settings or QSettings("memgui", "memgui")
        self.live = live
        self.session: BrainSession | None = None
        self.model: TraceTableModel | None = None
        self.watcher: LiveWatcher | None = None
        self.shared_live: SharedBrainLive | None = None  # a shared brain's live refresh
        self.runner = JobRunner(self)
        # The table's paging and search, the counts, the similar memories and the link
        # picker never queue behind an import or export: with both threads of `runner`
        # taken by long jobs, a search waited 12–30 s for one of them.
        self.query_runner = JobRunner(self)
        sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))
        self._remembered: tuple[str | None, list[str]] = (None, [])
        self._pending_select: str | None = None
        self.undo_group = QUndoGroup(self)
        self.setWindowIcon(icon("memgui"))
        self.resize(1280, 800)
        self.window_actions = build_actions(self, self.undo_group)
        self._build_central()
        self._build_status_bar()
        self.summary = ViewSummary(self)  # "12 of 340 memories", why a list is empty
        self.edits = WindowEdits(self)
        self.shown = ShownTrace(self)  # the detail pane follows the table and the changes
        self.files = BrainFiles(self)
        self.shared_brains = install_shared_brains(self)  # File ▸ Open shared brain…
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(COUNTS_DEBOUNCE_MS)
        self._counts_timer.timeout.connect(self.update_counts)
        self._connect()
        # File ▸ Import…/Export…, drag and drop onto the window, the close question.
        self.import_export = install_import_export(self)
        install_consolidation(self)  # Edit ▸ Consolidate…
        install_why_line(self)  # a cognitive search says why each result ranks where it does
        self.semantic = install_semantic(self)  # Ollama light, backfill, Search settings…
        self.graph = install_graph(self)  # View ▸ Graph (Ctrl+G): the graph window
        self.activity = install_activity(self)  # Agent activity: its dock and badge
        self.detail.set_runner(self.query_runner)  # "similar": never behind a long job
        self.detail.similar.open_requested.connect(self.edits.open_trace)
        self.detail.neighbours.open_requested.connect(self.edits.open_trace)
        self.menus = ContextMenus(self)  # right-click on rows, links and neighbours
        self.help_actions = install_help(self, self.window_actions.about)  # shortcuts, docs
        self.search_bar.meaning_note.linkActivated.connect(
            lambda _link: self.semantic.edit_settings(self)
        )
        self.shared_limits = SharedLimits(self)  # what a shared brain does not offer yet
        self._set_brain_actions_enabled(False)
        self.layout_state = WindowLayout(self, self.splitter, self.settings)
        self.layout_state.restore()
        self.pages.currentChanged.connect(self.layout_state.restore_split)
        self.update_title()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.layout_state.restore_split()

    def _connect(self) -> None:
        a = self.window_actions
        a.find.triggered.connect(self.focus_search)
        a.refresh.triggered.connect(self._refresh)
        a.trash_view.toggled.connect(self.filter_bar.trash_check.setChecked)
        self.filter_bar.trash_check.toggled.connect(a.trash_view.setChecked)
        a.quit.triggered.connect(self.close)
        a.about.triggered.connect(self._about)
        a.columns_menu.aboutToShow.connect(self._fill_columns_menu)
        self.search_bar.query_changed.connect(self._on_query_changed)
        self.search_bar.mode_changed.connect(self._set_search_mode)
        self.filter_bar.filter_changed.connect(self._set_filter)
        self.filter_bar.trash_check.toggled.connect(lambda _on: self._counts_timer.start())
        self.runner.job_started.connect(self._on_jobs_changed)
        self.runner.job_ended.connect(self._on_jobs_changed)
        self.detail.editor.dirty_changed.connect(lambda _dirty: self.update_title())

    def _set_brain_actions_enabled(self, enabled: bool) -> None:
        a = self.window_actions
        for action in (a.find, a.refresh, a.trash_view):
            action.setEnabled(enabled)
        writable = enabled and not self.read_only
        for action in (
            a.new_memory,
            a.save,
            a.delete,
            a.restore,
            a.purge,
            a.merge,
            a.add_tag,
            a.remove_tag,
            a.add_link,
            a.import_file,
        ):
            action.setEnabled(writable)
        self.detail.editor.set_read_only(enabled and self.read_only)
        self.read_only_label.setVisible(enabled and self.read_only)
        foreign = self.session.brain.foreign_triggers if self.session is not None else []
        self.triggers_label.setVisible(enabled and bool(foreign))
        if hasattr(self, "shared_limits"):
            self.shared_limits.apply()

    # --- the session --------------------------------------------------------------------

    def set_session(self, session: BrainSession) -> None:
        """Show `session`'s brain (the previous one is closed)."""
        self.close_session()
        self.session = session
        self.read_only_label.setText("Read-only")
        self.read_only_label.setToolTip(read_only_tip(session.brain))
        self.read_only_label.setStyleSheet("")
        self.triggers_label.setToolTip(foreign_triggers_tip(session.brain))
        self.undo_group.addStack(session.undo_stack)
        self.undo_group.setActiveStack(session.undo_stack)
        session.undo_stack.cleanChanged.connect(lambda _clean: self.update_title())
        self._undo_position = (session.undo_stack.index(), session.undo_stack.count())
        session.undo_stack.indexChanged.connect(self._say_undone_or_redone)
        session.error_reported.connect(self.show_error)
        session.ask_migration = lambda plan: self.edits.ask.migration(plan)
        self.semantic.attach(session)  # Ollama light, backfill; the table's readers embed
        open_reader = self.semantic.reader_factory(session)
        self.model = TraceTableModel(
            session.brain, self, runner=self.query_runner, open_reader=open_reader
        )
        self.model.query_finished.connect(self._on_query_finished)
        self.model.query_failed.connect(self.search_bar.show_error)
        # Rows on screen mean the brain is not empty: show the table now, not after the
        # count (a full scan, seconds at 1M traces) has answered.
        self.model.modelReset.connect(self._show_table_if_rows)
        self.model.modelAboutToBeReset.connect(self._remember_selection)
        self.table.setModel(self.model)
        self.table.selectionModel().currentRowChanged.connect(self.shown.on_current_row_changed)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self.update_actions())
        session.bus.changed.connect(self.model.apply_changes)
        session.bus.changed.connect(lambda *_: self._counts_timer.start())
        session.bus.changed.connect(self.shown.on_changes)
        self.detail.show_trace(session.brain, None)
        if self.live and session.shared:
            self.shared_live = watch_shared(self, session)
        elif self.live:
            self.watcher = LiveWatcher(session, self)
            self.watcher.external_changed.connect(self._on_external_change)
            self.watcher.file_lost.connect(self._on_file_lost)
            self.watcher.start()
        self._set_brain_actions_enabled(True)
        self.welcome.set_brain_path(session.where)
        # Another brain: the last brain's search would make this one look empty.
        self.summary.info = None
        self.search_bar.clear()
        self._on_query_changed("")
        self.model.set_query(
            replace(
                self.model.query,
                filter=self.filter_bar.current_filter(),
                search=self.search_bar.query(),
                mode=self.search_bar.mode(),
            )
        )
        self.update_counts()
        self.update_title()
        self.update_actions()
        self.session_changed.emit()

    def _on_file_lost(self, why: str) -> None:
        """The open file was deleted, replaced or damaged: writing on would write where
        nobody reads. Everything turns read-only; an unsaved edit stays in the editor."""
        if self.session is None:
            return
        name = Path(self.session.path).name
        self.read_only_label.setText("File lost")
        self.read_only_label.setStyleSheet(
            f"color: {colours.ERROR}; font-weight: bold"
        )  # red on either palette
        self.read_only_label.setToolTip(
            f"{self.session.path} {why}. Nothing more can be saved to it: copy any unsaved "
            "text from the editor, then open the brain again (File ▸ Open)."
        )
        self._set_brain_actions_enabled(True)
        self.update_title()
        self.show_error(f"{name} {why}: nothing more can be saved to it (see the status bar)")

    def close_session(self) -> None:
        if self.session is None:
            return
        if self.watcher is not None:
            self.watcher.stop()
            self.watcher.deleteLater()
            self.watcher = None
        if self.shared_live is not None:
            self.shared_live.stop()
            self.shared_live = None
        self.semantic.detach()
        self.runner.shutdown()
        self.query_runner.shutdown()
        self.undo_group.removeStack(self.session.undo_stack)
        self.table.setModel(None)
        self.detail.show_trace(None, None)
        if self.model is not None:
            self.model.close_readers()  # the runner has stopped: no job holds one
            self.model.deleteLater()
            self.model = None
        self.session.close()
        self.session.deleteLater()
        self.session = None
        self._set_brain_actions_enabled(False)
        self.session_changed.emit()

    def update_title(self) -> None:
        if self.session is None:
            self.setWindowTitle("memgui")
            return
        clean = self.session.undo_stack.isClean() and not self.detail.editor.dirty
        mark = "" if clean else " •"
        name = self.session.name
        state = " (read-only)" if self.read_only else ""
        self.setWindowTitle(f"{name} [{self.session.brain_id}]{state}{mark} — memgui")

    # --- reactions ----------------------------------------------------------------------

    def clear_search_and_filters(self) -> None:
        """Back to every memory of the view (the trash stays the trash)."""
        self.search_bar.set_query("")
        trash = self.filter_bar.trash_check.isChecked()
        self.filter_bar.set_filter(TraceFilter(deleted=trash))

    def _refresh(self) -> None:
        if self.model is not None:
            self.model.refresh()

    def _set_search_mode(self, mode: str) -> None:
        if self.model is not None:
            self.model.set_search_mode(mode)

    def _set_filter(self, value: TraceFilter) -> None:
        if self.model is not None:
            self.model.set_filter(value)

    def _on_query_changed(self, text: str) -> None:
        self.table.set_search_terms(text)
        self.detail.editor.highlighter.set_terms(self.table.highlight_delegate.terms)
        if self.model is not None:
            self.model.set_search(text)

    def _on_query_finished(self, outcome: QueryOutcome) -> None:
        self.search_bar.show_result(outcome.search_mode, len(outcome.ids))
        if self.search_bar.mode() in ("semantic", "hybrid") and outcome.search_mode == "keyword":
            self.search_bar.show_meaning_note(self.semantic.why_no_meaning())
        self.summary.update()
        self._restore_selection()
        pending, self._pending_select = self._pending_select, None
        if pending:
            self.select_id(pending)
        self._detail_follows_table()

    def _say_undone_or_redone(self, index: int) -> None:
        """Undo and redo say what they did. A push moves the index too (and says its own),
        and so does a step that could not replay: the stack drops it, and it said why."""
        stack = self.session.undo_stack if self.session is not None else None
        if stack is None:
            return
        last_index, last_count = self._undo_position
        self._undo_position = (index, stack.count())
        if stack.count() != last_count:
            return
        if index < last_index:
            undone = stack.command(index)
            self.show_message(f"Undone: {undone.text()} (Ctrl+Shift+Z redoes)")
            if isinstance(undone, SetDeletedCommand) and undone.deleted and undone.ids:
                self.select_when_ready(undone.ids[0])  # the memory back from the trash
        elif index > last_index:
            self.show_message(f"Redone: {stack.command(index - 1).text()} (Ctrl+Z undoes)")

    def _on_external_change(self, _changes: Changes, summary: str) -> None:
        self.show_message(summary, 10_000)

    def _on_jobs_changed(self, _job: Job) -> None:
        jobs = [j for j in self.runner.active_jobs if j.name not in QUIET_JOBS]
        self.job_label.setText(", ".join(f"{j.name}…" for j in jobs))

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.edits.settle_unsaved_edit():
            event.ignore()
            return
        self.table.save_state()
        self.layout_state.save()
        self.runner.shutdown()
        self.query_runner.shutdown()
        self.close_session()
        super().closeEvent(event)
