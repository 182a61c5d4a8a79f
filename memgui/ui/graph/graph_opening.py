"""The graph view in the main window, installed by one call: `install_graph(window)`.

View ▸ Graph (Ctrl+G), a toolbar button and the table's context menu open the graph window
on the selected memory (one graph window per open brain: opening again re-centres it).
Selection is one: a memory selected in the graph is selected in the table and shown in the
detail pane; one selected in the table is selected in the graph when it is there. Positions
are kept per brain in the app's data folder (beside the settings file when the settings are
a file of their own, as in tests and screenshots).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from platformdirs import user_data_dir
from PySide6.QtCore import QModelIndex, QObject, QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from memgui.core.errors import NotFound
from memgui.core.graph_view import PositionStore
from memgui.ui.graph.graph_window import GraphWindow
from memgui.ui.theme.icons import icon

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow


def positions_folder(settings: QSettings) -> Path:
    if settings.format() == QSettings.Format.IniFormat:
        return Path(settings.fileName()).parent / "graph-positions"
    return Path(user_data_dir("memgui", appauthor=False)) / "graph-positions"


class GraphOpening(QObject):
    """What `install_graph` adds to the window; kept as `window.graph`."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.graph_window: GraphWindow | None = None
        self.depth = 1  # hops a new graph window opens with
        self.action = QAction(icon("graph"), "&Graph", window)
        self.action.setShortcut(QKeySequence("Ctrl+G"))
        tip = "Show the selected memory in the graph: its links and knowledge (Ctrl+G)"
        self.action.setToolTip(tip)
        self.action.setStatusTip(tip)
        self.action.setEnabled(False)
        self.action.triggered.connect(lambda: self.open())
        view_menu = next(
            (m.menu() for m in window.menuBar().actions() if m.text() == "&View"), None
        )
        if isinstance(view_menu, QMenu):
            view_menu.addSeparator()
            view_menu.addAction(self.action)
        toolbar = window.findChild(QToolBar, "main_toolbar")
        if toolbar is not None:
            toolbar.addSeparator()
            toolbar.addAction(self.action)
        table = window.table
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        first = table.actions()
        if first:
            table.insertAction(first[0], self.action)
        else:
            table.addAction(self.action)
        for extra in (window.window_actions.add_link, window.window_actions.merge):
            table.addAction(extra)
        window.session_changed.connect(self._on_session_changed)

    def _on_session_changed(self) -> None:
        if self.graph_window is not None:
            self.graph_window.close()
            self.graph_window.deleteLater()
            self.graph_window = None
        window = self.window
        self.action.setEnabled(window.session is not None)
        if window.session is not None and window.table.selectionModel() is not None:
            window.table.selectionModel().currentRowChanged.connect(self._on_table_row)

    def _on_table_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        window = self.window
        if self.graph_window is None or window.model is None or not current.isValid():
            return
        trace_id = window.model.id_at(current.row())
        if trace_id:
            self.graph_window.show_selected(trace_id)

    def open(self, trace_id: str | None = None) -> GraphWindow | None:
        """Open (or bring up) the graph window on `trace_id`, else the current memory."""
        window = self.window
        session = window.session
        if session is None:
            return None
        trace_id = (
            trace_id
            or window.current_id()
            or (window.detail.trace.id if window.detail.trace is not None else None)
        )
        graph = self._graph_window()
        if trace_id:
            graph.open_on(trace_id)
        else:
            graph.open_overview(0)  # nothing selected: the busiest nodes of the brain
        return graph

    def _graph_window(self) -> GraphWindow:
        window, session = self.window, self.window.session
        assert session is not None
        if self.graph_window is None:
            # A file's path, or a shared brain's address (its password never in the key).
            store = PositionStore(
                positions_folder(window.settings), session.where, session.brain_id
            )
            self.graph_window = GraphWindow(session, store, window)
            self.graph_window.depth_box.setValue(self.depth)
            self.graph_window.trace_selected.connect(self._follow)
        return self.graph_window

    def _follow(self, trace_id: str) -> None:
        """A memory selected in the graph: the table selects it, else the detail pane shows it."""
        window = self.window
        if window.session is None or window.select_id(trace_id):
            return
        try:
            trace = window.session.brain.get(trace_id)
        except NotFound:
            return
        if window.edits.settle_unsaved_edit():
            window.table.selectionModel().clearSelection()
            window.detail.show_trace(window.session.brain, trace)


def install_graph(window: MainWindow) -> GraphOpening:
    return GraphOpening(window)
