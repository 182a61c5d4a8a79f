"""The main window: search and filters over the trace table, the detail pane beside it.

It owns one `BrainSession` at a time (File ▸ Open swaps it), routes the change bus to the
table and the detail pane, and keeps the status bar's counts. Edits live in
`window_edits.py`, opening brains in `brain_files.py`, and how the detail pane follows the
table and the changes in `shown_trace.py`.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut, QShowEvent, QUndoGroup
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from memgui.core.model import Changes, Facets, TraceFilter
from memgui.core.progress import Progress
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
from memgui.ui.views.detail_pane import DetailPane
from memgui.ui.views.filter_bar import FilterBar
from memgui.ui.views.search_bar import SearchBar
from memgui.ui.views.trace_table_view import TraceTableView
from memgui.ui.views.welcome_page import WelcomePage
from memgui.ui.window.brain_files import BrainFiles
from memgui.ui.window.brain_tips import READ_ONLY_TIP, foreign_triggers_tip, read_only_tip
from memgui.ui.window.context_menus import ContextMenus
from memgui.ui.window.import_export_actions import install_import_export
from memgui.ui.window.live_refresh import LiveWatcher
from memgui.ui.window.shared_brains import SharedBrainLive, install_shared_brains, watch_shared
from memgui.ui.window.shared_limits import SharedLimits
from memgui.ui.window.shown_trace import ShownTrace
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


def _info_job(
    session: BrainSession, trash: bool
) -> Generator[Progress, None, tuple[dict[str, Any], Facets]]:
    reader = session.open_reader()
    try:
        yield Progress(0, None, "counting")
        return reader.info(), reader.facets(deleted=trash)
    finally:
        reader.close()


class MainWindow(QMainWindow):
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

    # --- layout -------------------------------------------------------------------------

    def _build_central(self) -> None:
        self.search_bar = SearchBar()
        self.filter_bar = FilterBar()
        self.table = TraceTableView(self.settings)
        self.detail = DetailPane()
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(6, 6, 0, 6)
        column.addWidget(self.search_bar)
        column.addWidget(self.filter_bar)
        column.addWidget(self.table, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([840, 440])
        self.welcome = WelcomePage()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.welcome)
        self.pages.addWidget(self.splitter)
        self.setCentralWidget(self.pages)
        for action in (self.window_actions.delete, self.window_actions.purge):
            # Del acts on the table only, never on the text being typed in the editor.
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.table.addAction(action)
        # Esc in the search field goes back to the table; the default (window) context made
        # Esc anywhere do it, so the filter bar's Esc never cleared and the editor lost focus.
        back = QShortcut(QKeySequence("Escape"), self.search_bar.field, self.table.setFocus)
        back.setContext(Qt.ShortcutContext.WidgetShortcut)
        self._set_tab_order()

    def _set_tab_order(self) -> None:
        """Tab follows the screen: search, filters, table, then the editor top to bottom."""
        s, f, e = self.search_bar, self.filter_bar, self.detail.editor
        chain = (
            s.field,
            s.mode_box,
            f.type_box,
            f.scope_box,
            f.category_box,
            f.scope_id_edit,
            f.tag_edit,
            f.trash_check,
            self.table,
            e.content,
            e.tags.field,  # tag chips insert themselves just before it (tag_editor.py)
            e.type_box,
            e.category_box,
            e.scope_box,
            e.scope_id_edit,
            e.ttl_edit,
            e.revert_button,
            e.save_button,
            self.detail.tabBar(),
        )
        for first, second in zip(chain, chain[1:], strict=False):
            self.setTabOrder(first, second)

    def _build_status_bar(self) -> None:
        self.counts_label = QLabel()
        self.counts_label.setObjectName("counts_label")
        self.job_label = QLabel()
        self.job_label.setObjectName("job_label")
        self.read_only_label = QLabel("Read-only")
        self.read_only_label.setObjectName("read_only_label")
        self.read_only_label.setToolTip(READ_ONLY_TIP)
        self.read_only_label.hide()
        self.statusBar().addPermanentWidget(self.read_only_label)
        self.triggers_label = QLabel("Foreign triggers")  # shown when the brain has some
        self.triggers_label.setObjectName("triggers_label")
        self.triggers_label.hide()
        self.statusBar().addPermanentWidget(self.triggers_label)
        self.statusBar().addPermanentWidget(self.job_label)
        self.statusBar().addPermanentWidget(self.counts_label)

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

    @property
    def read_only(self) -> bool:
        """The open brain's file cannot be written: browse and search only."""
        return self.session is not None and self.session.read_only

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

    def update_counts(self) -> None:
        """Count live and trashed memories off the GUI thread (a count grows with the brain)."""
        session = self.session
        if session is None:
            self.counts_label.setText("")
            return
        trash = self.filter_bar.trash_check.isChecked()
        job = self.query_runner.start("counts", lambda: _info_job(session, trash))
        job.finished.connect(lambda counted: self._show_counts(session, *counted))
        job.failed.connect(lambda exc: self.counts_label.setText(str(exc)))

    def _show_counts(self, session: BrainSession, info: dict[str, Any], facets: Facets) -> None:
        if session is not self.session:
            return  # counted for a brain that is no longer open
        self.summary.set_info(info)
        self.filter_bar.set_facets(facets)
        empty = info["traces"] == 0
        self.pages.setCurrentWidget(self.welcome if empty else self.splitter)

    def _show_table_if_rows(self) -> None:
        if self.model is not None and self.model.rowCount() > 0:
            self.pages.setCurrentWidget(self.splitter)

    def show_message(self, text: str, timeout_ms: int = 6000) -> None:
        self.statusBar().showMessage(text, timeout_ms)

    def show_error(self, text: str) -> None:
        self.statusBar().showMessage(text, 12_000)

    # --- reactions ----------------------------------------------------------------------

    def clear_search_and_filters(self) -> None:
        """Back to every memory of the view (the trash stays the trash)."""
        self.search_bar.set_query("")
        trash = self.filter_bar.trash_check.isChecked()
        self.filter_bar.set_filter(TraceFilter(deleted=trash))

    def focus_search(self) -> None:
        self.pages.setCurrentWidget(self.splitter)
        self.search_bar.field.setFocus()
        self.search_bar.field.selectAll()

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

    def _detail_follows_table(self) -> None:
        """After a new list (the Trash switched on, a filter): the detail pane shows the
        table's current memory, or none when the one it showed is not in the list. An
        unsaved edit or a new memory stays where it is."""
        editor = self.detail.editor
        if self.session is None or self.model is None or editor.dirty or editor.is_new:
            return
        current = self.current_id()
        shown = self.detail.trace
        if current is not None and (shown is None or shown.id != current):
            self.detail.show_trace(
                self.session.brain, self.model.trace_at(self.table.currentIndex().row())
            )
        elif current is None and shown is not None and self.model.row_of(shown.id) < 0:
            self.detail.show_trace(self.session.brain, None)
        self.update_actions()

    def _remember_selection(self) -> None:
        self._remembered = (self.current_id(), self.selected_ids())

    def _restore_selection(self) -> None:
        current, selected = self._remembered
        if self.model is None or not (current or selected):
            return
        selection = self.table.selectionModel()
        selection.blockSignals(True)
        try:
            for trace_id in selected:
                row = self.model.row_of(trace_id)
                if row >= 0:
                    flags = (
                        QItemSelectionModel.SelectionFlag.Select
                        | QItemSelectionModel.SelectionFlag.Rows
                    )
                    selection.select(self.model.index(row, 0), flags)
            row = self.model.row_of(current) if current else -1
            if row >= 0:
                selection.setCurrentIndex(
                    self.model.index(row, 0), QItemSelectionModel.SelectionFlag.NoUpdate
                )
        finally:
            selection.blockSignals(False)
        self.table.viewport().update()
        self.update_actions()

    def current_id(self) -> str | None:
        if self.model is None:
            return None
        index = self.table.currentIndex()
        return self.model.id_at(index.row()) if index.isValid() else None

    def selected_ids(self) -> list[str]:
        if self.model is None or self.table.selectionModel() is None:
            return []
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [tid for tid in (self.model.id_at(r) for r in rows) if tid]

    def select_id(self, trace_id: str) -> bool:
        """Make `trace_id` the current row (clearing filters that hide it is not done)."""
        model = self.model
        row = model.row_of(trace_id) if model is not None else -1
        if model is None or row < 0:
            return False
        index = model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        self.table.scrollTo(index)
        return True

    def select_when_ready(self, trace_id: str) -> None:
        """Select `trace_id` now, or once the running query has answered."""
        if self.model is not None and not self.model.busy and self.select_id(trace_id):
            return
        self._pending_select = trace_id

    def update_actions(self) -> None:
        count = 0 if self.read_only else len(self.selected_ids())
        trash = self.filter_bar.trash_check.isChecked()
        a = self.window_actions
        a.delete.setEnabled(count > 0 and not trash)
        a.restore.setEnabled(count > 0 and trash)
        a.purge.setEnabled(count > 0)
        a.merge.setEnabled(count >= 2 and not trash)
        a.add_tag.setEnabled(count > 0)
        a.remove_tag.setEnabled(count > 0)
        shown = self.detail.trace
        # As the Links tab's Add link…: a memory in the trash takes no new links.
        a.add_link.setEnabled(shown is not None and not shown.deleted and not self.read_only)
        if hasattr(self, "shared_limits"):
            self.shared_limits.apply()

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

    def _fill_columns_menu(self) -> None:
        self.window_actions.columns_menu.clear()
        for action in self.table.column_menu().actions():
            self.window_actions.columns_menu.addAction(action)

    def _about(self) -> None:
        QMessageBox.about(
            self, "About memgui", "memgui — browse, search and edit what AI agents remember."
        )

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
