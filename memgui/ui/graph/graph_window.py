"""The graph window: the canvas, its keyboard twin, filters and legend, opened on a memory.

Every canvas action has a key: Enter expands the selected node, + brings its "+N more",
C centres the view on it, L links it to a node picked from a list, Shift+Del unlinks,
Ctrl+M merges the selected, Del forgets, F fits, Ctrl+F searches, Ctrl+E exports. The
lists beside the canvas hold the shown nodes and edges; selecting in either selects on the
canvas and in the main window's table, and the other way round.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from memgui.core.errors import MemguiError
from memgui.core.graph_view import RANKS, TRACE, Overview, PositionStore
from memgui.ui.graph import encodings
from memgui.ui.graph.graph_canvas import GraphCanvas
from memgui.ui.graph.graph_controller import GraphController
from memgui.ui.graph.graph_edits import GraphEdits
from memgui.ui.graph.graph_export_ui import GraphExport
from memgui.ui.graph.graph_list_models import GraphEdgeListModel, GraphNodeListModel, GraphRoles
from memgui.ui.graph.graph_panel import FilterPanel, Legend
from memgui.ui.graph.graph_scene import GraphScene
from memgui.ui.session import BrainSession
from memgui.ui.theme.icons import icon


class GraphWindow(QMainWindow):
    trace_selected = Signal(str)  # one memory selected here: the main window selects it too

    def __init__(
        self, session: BrainSession, positions: PositionStore, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowFlag(Qt.WindowType.Window, True)
        self.setObjectName("graph_window")
        self.setWindowIcon(icon("graph"))
        self.session = session
        self.scene = GraphScene(self)
        self.controller = GraphController(session, self.scene, positions, self)
        self.canvas = GraphCanvas(self.scene)
        self.canvas.filter = self.canvas.filter.__class__(hub_degree=self.controller.hub_degree)
        self.edits = GraphEdits(self)
        self.export = GraphExport(self)
        self.selected: list[str] = []
        self.overview: Overview | None = None
        self._syncing = False
        self._build()
        self._connect()
        self.resize(1200, 760)
        self._update_title()

    # --- building -----------------------------------------------------------------------

    def _build(self) -> None:
        self.node_model = GraphNodeListModel(self.canvas, self)
        self.edge_model = GraphEdgeListModel(self.canvas, self)
        self.node_table = _table(self.node_model, "graph_nodes")
        self.edge_table = _table(self.edge_model, "graph_edges")
        self.lists = QTabWidget()
        self.lists.addTab(self.node_table, "Nodes")
        self.lists.addTab(self.edge_table, "Edges")
        self.panel = FilterPanel(self.controller.hub_degree)
        self.legend = Legend()
        side = QWidget()
        column = QVBoxLayout(side)
        column.addWidget(self.panel)
        column.addWidget(self.legend)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        scroll.setMinimumWidth(290)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(scroll)
        self.splitter.addWidget(self.canvas)
        self.splitter.addWidget(self.lists)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([290, 610, 300])
        self.setCentralWidget(self.splitter)
        self.counts = QLabel()
        self.counts.setObjectName("graph_counts")
        self.statusBar().addPermanentWidget(self.counts)
        self._build_actions()

    def _action(self, text: str, keys: str, slot: object, tip: str) -> QAction:
        """An action of the window; one of a single key (Return, Del, L…) works where the
        canvas or a list has the focus, so the search field keeps its own keys."""
        action = QAction(text, self)
        if keys:
            action.setShortcut(QKeySequence(keys))
        action.setToolTip(f"{tip} ({keys})" if keys else tip)
        action.triggered.connect(slot)
        if "Ctrl+" in keys:
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(action)
        else:
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            for widget in (self.canvas, self.node_table, self.edge_table):
                widget.addAction(action)
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.expand_action = a("Expand", "Return", self.expand_selected, "Bring the neighbours")
        self.more_action = a("More", "+", self.more_selected, "Bring the next neighbours")
        self.centre_action = a("Centre", "C", self.centre_selected, "Open the view on it")
        self.fit_action = a("Fit", "F", lambda: self.canvas.fit(), "Show every visible node")
        self.link_action = a("Link…", "L", self.edits.link_selected, "Link it to another node")
        self.unlink_action = a("Unlink", "Shift+Del", self.edits.unlink_selected, "Remove a link")
        self.merge_action = a("Merge…", "Ctrl+M", self.edits.merge_selected, "Merge the selected")
        self.forget_action = a("Forget", "Del", self.edits.forget_selected, "Forget the selected")
        self.find_action = a("Find", "Ctrl+F", self._focus_search, "Find a memory")
        self.export_action = a("Export…", "Ctrl+E", self.export.ask_and_export, "Export the graph")
        self.close_action = a("Close", "Ctrl+W", self.close, "Close the graph")
        self.overview_action = a(
            "Overview", "Ctrl+Shift+G", lambda: self.open_overview(0), "The busiest nodes"
        )
        self.next_page = a("Next page", "Ctrl+PgDown", lambda: self._page(1), "Next busiest")
        self.previous_page = a("Previous page", "Ctrl+PgUp", lambda: self._page(-1), "Back")
        self.badge = QLabel()
        self.badge.setObjectName("graph_badge")
        self.depth_box = QSpinBox()
        self.depth_box.setRange(1, 3)
        self.depth_box.setPrefix("Depth ")
        self.depth_box.setToolTip("Hops from the centre when the view opens on a node")
        self.rank = QComboBox()
        self.rank.addItems([f"by {r}" for r in RANKS])
        self.rank.setToolTip("Which neighbours come first when there are too many")
        self.colour_by = QComboBox()
        self.colour_by.addItems([f"colour: {b}" for b in encodings.COLOUR_BY])
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a memory (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self.search.setMaximumWidth(260)
        bar = QToolBar("Graph", self)
        bar.setObjectName("graph_toolbar")
        bar.setMovable(False)
        bar.addActions([self.fit_action, self.centre_action, self.expand_action, self.more_action])
        bar.addSeparator()
        for widget in (self.depth_box, self.rank, self.colour_by):
            bar.addWidget(widget)
        bar.addSeparator()
        bar.addActions(
            [self.link_action, self.unlink_action, self.merge_action, self.forget_action]
        )
        bar.addSeparator()
        bar.addWidget(self.search)
        bar.addAction(self.export_action)
        bar.addSeparator()
        bar.addAction(self.overview_action)
        bar.addAction(self.previous_page)
        self.badge_action = bar.addWidget(self.badge)
        bar.addAction(self.next_page)
        for action in (self.previous_page, self.badge_action, self.next_page):
            action.setVisible(False)
        self.addToolBar(bar)
        writable = not self.session.read_only
        for action in (self.link_action, self.unlink_action, self.merge_action, self.forget_action):
            action.setEnabled(writable)

    def _connect(self) -> None:
        c, ctl = self.canvas, self.controller
        c.node_clicked.connect(self._on_node_clicked)
        c.background_clicked.connect(lambda: self.select([]))
        c.node_activated.connect(self.expand)
        c.more_activated.connect(self.expand)
        c.link_dragged.connect(self.edits.link)
        c.node_moved.connect(ctl.node_moved)
        c.context_requested.connect(self._context_menu)
        c.filtered.connect(self._update_counts)
        self.scene.changed.connect(self._on_scene_changed)
        ctl.opened.connect(self._on_opened)
        ctl.overview_opened.connect(self._on_overview)
        ctl.failed.connect(self.show_error)
        ctl.busy_changed.connect(lambda _busy: self._update_counts())
        self.panel.filter_changed.connect(self.canvas.set_filter)
        self.depth_box.valueChanged.connect(lambda d: setattr(ctl, "depth", d))
        self.rank.currentIndexChanged.connect(lambda i: setattr(ctl, "rank", RANKS[i]))
        self.colour_by.currentIndexChanged.connect(self._on_colour_by)
        self.search.returnPressed.connect(self.find_text)
        self.node_table.selectionModel().selectionChanged.connect(self._on_node_rows)
        self.node_table.activated.connect(lambda index: self.expand(_id_of(index)))
        self.edge_table.selectionModel().selectionChanged.connect(self._on_edge_rows)
        self.session.closing.connect(self.close)

    # --- opening and growing ------------------------------------------------------------

    def open_on(self, node_id: str) -> None:
        self.controller.open_on(node_id)
        self.show()
        self.raise_()

    def _on_opened(self, node_id: str) -> None:
        self._show_pages(None)
        self.canvas.fit()
        self.canvas.centre_on(node_id)
        self.select([node_id], announce=False)

    def open_overview(self, page: int = 0) -> None:
        """The busiest nodes of the whole graph, a page at a time (Ctrl+PgDown: the next)."""
        self.controller.open_overview(page)
        self.show()
        self.raise_()

    def _on_overview(self, overview: Overview) -> None:
        self._show_pages(overview)
        self.canvas.fit()
        self.select([], announce=False)

    def _show_pages(self, overview: Overview | None) -> None:
        self.overview = overview
        for action in (self.previous_page, self.badge_action, self.next_page):
            action.setVisible(overview is not None)
        if overview is None:
            return
        first = overview.page * overview.size
        shown = len(overview.found.nodes)
        self.badge.setText(
            f" Showing {shown:,} of {overview.linked:,} linked nodes "
            f"({first + 1:,}–{first + shown:,} by degree; page {overview.page + 1} "
            f"of {overview.pages}) "
        )
        self.previous_page.setEnabled(overview.page > 0)
        self.next_page.setEnabled(overview.page + 1 < overview.pages)
        self._update_title()

    def _page(self, step: int) -> None:
        if self.overview is not None:
            page = min(max(0, self.overview.page + step), self.overview.pages - 1)
            self.controller.open_overview(page, self.overview.size)

    def expand(self, node_id: str) -> None:
        if node_id:
            self.controller.expand(node_id)

    def expand_selected(self) -> None:
        if self.selected:
            self.expand(self.selected[0])

    def more_selected(self) -> None:
        if self.selected:
            self.expand(self.selected[0])

    def centre_selected(self) -> None:
        if self.selected:
            self.controller.open_on(self.selected[0])

    def find_text(self) -> None:
        """Centre on the first shown node whose label holds the text; else search the
        brain and open the view on its best match."""
        text = self.search.text().strip()
        if not text:
            return
        folded = text.casefold()
        for node_id in self.node_model.ids:
            if folded in self.scene.nodes[node_id].label.casefold():
                self.select([node_id])
                self.canvas.centre_on(node_id)
                return
        try:
            hits = self.session.brain.search(text, limit=1, record_recall=False).traces
        except MemguiError as exc:
            self.show_error(str(exc))
            return
        if not hits:
            self.show_error(f"Nothing found for “{text}”")
            return
        self.controller.open_on(hits[0].id)

    # --- selection ----------------------------------------------------------------------

    def select(self, ids: list[str], announce: bool = True) -> None:
        self.selected = [i for i in ids if i in self.scene.nodes]
        self.canvas.set_selected(self.selected)
        self._syncing = True
        try:
            selection = self.node_table.selectionModel()
            selection.clearSelection()
            flags = (
                QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
            )
            for node_id in self.selected:
                row = self.node_model.row_of(node_id)
                if row >= 0:
                    selection.select(self.node_model.index(row, 0), flags)
                    self.node_table.scrollTo(self.node_model.index(row, 0))
        finally:
            self._syncing = False
        single = self.selected[0] if len(self.selected) == 1 else None
        if announce and single and self.scene.nodes[single].kind == TRACE:
            self.trace_selected.emit(single)

    def show_selected(self, trace_id: str) -> None:
        """The main window's table selected a memory: select it here when it is shown."""
        if trace_id in self.scene.nodes and self.selected != [trace_id]:
            self.select([trace_id], announce=False)

    def selected_edge(self) -> str | None:
        rows = self.edge_table.selectionModel().selectedRows()
        return self.edge_model.keys[rows[0].row()] if rows else None

    def _on_node_clicked(self, node_id: str, modifiers: object) -> None:
        if isinstance(modifiers, Qt.KeyboardModifier) and modifiers & (
            Qt.KeyboardModifier.ControlModifier
        ):
            chosen = [i for i in self.selected if i != node_id]
            self.select(chosen if node_id in self.selected else [*self.selected, node_id])
        else:
            self.select([node_id])

    def _on_node_rows(self, *_args: object) -> None:
        if self._syncing:
            return
        rows = sorted({i.row() for i in self.node_table.selectionModel().selectedRows()})
        ids = [self.node_model.ids[r] for r in rows]
        self.select(ids)
        if len(ids) == 1:
            self.canvas.centre_on(ids[0])

    def _on_edge_rows(self, *_args: object) -> None:
        key = self.selected_edge()
        edge = self.scene.edges.get(key) if key else None
        if edge is not None:
            self.canvas.set_selected([edge.source, edge.target])

    # --- reactions ----------------------------------------------------------------------

    def _on_scene_changed(self) -> None:
        values = self.scene.arrays.values
        types = sorted(set(values.get("type", ())))
        scopes = sorted(set(values.get("scope", ())))
        kinds = sorted({kind for kind, _origin in self.scene.edge_arrays.groups})
        self.panel.blockSignals(True)
        self.panel.set_choices(types, scopes, kinds)
        self.panel.blockSignals(False)
        self._update_legend()
        expanded = self.scene.expanded
        self.canvas.set_more({i: h for i in expanded if (h := self.scene.hidden(i)) > 0})
        self.selected = [i for i in self.selected if i in self.scene.nodes]
        self.canvas.set_selected(self.selected)
        self._update_title()

    def _on_colour_by(self, index: int) -> None:
        self.canvas.set_colour_by(encodings.COLOUR_BY[index])
        self._update_legend()

    def _update_legend(self) -> None:
        by = self.canvas.colour_by
        values = list(set(self.scene.arrays.values.get(by, ())))
        self.legend.set_entries(encodings.legend(values, by), by)

    def _update_counts(self) -> None:
        total, shown = len(self.scene.nodes), len(self.node_model.ids)
        edges = len(self.edge_model.keys)
        hidden = f" ({total - shown} hidden by the filters)" if total > shown else ""
        busy = " · working…" if self.controller.busy else ""
        self.counts.setText(f"{shown} nodes · {edges} edges{hidden}{busy}")

    def _update_title(self) -> None:
        centre = self.scene.nodes.get(self.scene.centre or "")
        name = f" — {centre.label}" if centre is not None else ""
        if self.overview is not None:
            name = " — overview"
        self.setWindowTitle(f"Graph{name} [{self.session.brain_id}] — memgui")

    def _context_menu(self, node_id: str, where: QPoint) -> None:
        menu = QMenu(self)
        if node_id:
            if node_id not in self.selected:
                self.select([node_id])
            menu.addActions([self.expand_action, self.centre_action, self.link_action])
            menu.addActions([self.unlink_action, self.merge_action, self.forget_action])
        else:
            menu.addActions([self.fit_action, self.export_action])
        menu.exec(where)

    def _focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def show_error(self, text: str) -> None:
        self.statusBar().showMessage(text, 12_000)

    def show_message(self, text: str) -> None:
        self.statusBar().showMessage(text, 6_000)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.controller.shutdown()
        self.export.shutdown()
        super().closeEvent(event)


def _table(model: GraphNodeListModel | GraphEdgeListModel, name: str) -> QTableView:
    table = QTableView()
    table.setObjectName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().hide()
    # Rows of one height: the view never measures 100k rows to lay them out.
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    table.horizontalHeader().setStretchLastSection(True)
    table.setColumnWidth(0, 180)
    return table


def _id_of(index: QModelIndex) -> str:
    value = index.data(GraphRoles.Id)
    return value if isinstance(value, str) else ""
