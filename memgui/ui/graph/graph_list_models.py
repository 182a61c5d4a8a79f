"""The graph view's keyboard twin: the shown nodes and edges as two tables beside the canvas.

Each lists what the canvas shows (the filter applied), follows every change of the scene,
and answers `data()` from the scene's dictionaries. A row's id is under `GraphRoles.Id`.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from memgui.core.graph_view import TRACE
from memgui.ui.graph.graph_canvas import GraphCanvas

Index = QModelIndex | QPersistentModelIndex


class GraphRoles(IntEnum):
    Id = Qt.ItemDataRole.UserRole + 1  # a node's id, or an edge's key


class _GraphTable(QAbstractTableModel):
    HEADERS: tuple[str, ...] = ()

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        horizontal = orientation == Qt.Orientation.Horizontal
        if horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None


class GraphNodeListModel(_GraphTable):
    HEADERS = ("Name", "Type", "Links", "More")

    def __init__(self, canvas: GraphCanvas, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.ids: list[str] = []
        self._rows: dict[str, int] = {}
        canvas.filtered.connect(self.reload)

    def reload(self) -> None:
        self.beginResetModel()
        scene = self.canvas.scene
        visible = set(self.canvas.visible_ids())
        self.ids = sorted(
            (i for i in scene.nodes if i in visible),
            key=lambda i: (i != scene.centre, scene.nodes[i].label.casefold(), i),
        )
        self._rows = {i: r for r, i in enumerate(self.ids)}
        self.endResetModel()

    def row_of(self, node_id: str) -> int:
        return self._rows.get(node_id, -1)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.ids)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self.ids):
            return None
        node_id = self.ids[index.row()]
        node = self.canvas.scene.nodes.get(node_id)
        if node is None:
            return None
        if role == GraphRoles.Id:
            return node_id
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{node.label}\n{node_id}"
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        column = index.column()
        if column == 0:
            mark = " (superseded)" if node.superseded else ""
            return f"{node.label}{mark}"
        if column == 1:
            return node.type if node.kind == TRACE else f"{node.type} (graph)"
        if column == 2:
            return node.degree
        if column == 3:
            return self.canvas.scene.hidden(node_id)
        return None


class GraphEdgeListModel(_GraphTable):
    HEADERS = ("From", "Kind", "To")

    def __init__(self, canvas: GraphCanvas, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.canvas = canvas
        self.keys: list[str] = []
        canvas.filtered.connect(self.reload)

    def reload(self) -> None:
        self.beginResetModel()
        keys, mask = self.canvas.scene.edge_arrays.keys, self.canvas.edge_mask
        # In the order they arrived (an expand's edges together): sorting 100k edges by
        # their ends' labels cost ~0.5 s a change.
        self.keys = [keys[k] for k in np.flatnonzero(mask)] if len(mask) == len(keys) else []
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.keys)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid() or not 0 <= index.row() < len(self.keys):
            return None
        key = self.keys[index.row()]
        scene = self.canvas.scene
        edge = scene.edges.get(key)
        if edge is None:
            return None
        if role == GraphRoles.Id:
            return key
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        column = index.column()
        if column == 0:
            return scene.nodes[edge.source].label
        if column == 1:
            return edge.kind if edge.directed else f"{edge.kind} (both ways)"
        if column == 2:
            return scene.nodes[edge.target].label
        return None
