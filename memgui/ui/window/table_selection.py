"""The table's selection and the status bar's counts, for `MainWindow`.

Which memory is current and which are selected, kept across a new list (a search, a
filter, a refresh), the detail pane following the table, the actions that depend on the
selection, and the live and trashed memories counted off the GUI thread.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QItemSelectionModel, QTimer

from memgui.core.model import Facets
from memgui.core.progress import Progress
from memgui.ui.jobs import JobRunner
from memgui.ui.session import BrainSession
from memgui.ui.window.window_frame import WindowFrame

if TYPE_CHECKING:
    from memgui.ui.window.shared_limits import SharedLimits
    from memgui.ui.window.view_summary import ViewSummary


def _info_job(
    session: BrainSession, trash: bool
) -> Generator[Progress, None, tuple[dict[str, Any], Facets]]:
    reader = session.open_reader()
    try:
        yield Progress(0, None, "counting")
        return reader.info(), reader.facets(deleted=trash)
    finally:
        reader.close()


class TableSelection(WindowFrame):
    """The selection, the detail pane following it, and the counts (see the module)."""

    session: BrainSession | None
    query_runner: JobRunner
    summary: ViewSummary
    shared_limits: SharedLimits
    _counts_timer: QTimer
    _remembered: tuple[str | None, list[str]]
    _pending_select: str | None

    @property
    def read_only(self) -> bool:
        """The open brain's file cannot be written: browse and search only."""
        return self.session is not None and self.session.read_only

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
