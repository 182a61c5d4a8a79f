"""The graph the view shows: its nodes and edges as the core answered them, and where each is.

The scene mirrors the core: it holds what `memgui.core.graph_view` returned (nodes, edges,
what each expanded node has pending) and changes only when told what changed — an answer
added, nodes re-read, nodes or edges gone. For drawing and filtering it keeps the same
facts as numpy arrays, one row per node and per edge, rebuilt when the structure changes;
positions live in one (n, 2) array that a running layout writes into.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, Signal

from memgui.core.graph_view import TRACE, GraphEdge, GraphNode, Neighbourhood
from memgui.ui.graph import encodings


@dataclass
class NodeArrays:
    """One row per shown node, in `ids` order."""

    ids: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    trace: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    radius: np.ndarray = field(default_factory=lambda: np.zeros(0))
    alpha: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    below_prune: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    superseded: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    degree: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    strength: np.ndarray = field(default_factory=lambda: np.zeros(0))
    created: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    accessed: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # -1: never
    slots: dict[str, np.ndarray] = field(default_factory=dict)  # colour slot, by colour mode
    values: dict[str, np.ndarray] = field(default_factory=dict)  # type/scope/category, by mode


@dataclass
class EdgeArrays:
    keys: list[str] = field(default_factory=list)
    src: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    dst: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    kinds: list[str] = field(default_factory=list)
    group: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # into `groups`
    groups: list[tuple[str, str]] = field(default_factory=list)  # (kind, origin)
    directed: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


class GraphScene(QObject):
    changed = Signal()  # nodes or edges were added, removed or read again
    moved = Signal()  # positions changed (a layout step, a node dragged)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.nodes: dict[str, GraphNode] = {}
        self.edges: dict[str, GraphEdge] = {}
        self.pending: dict[str, list[str]] = {}  # expanded node -> next neighbours, best first
        self.expanded: set[str] = set()
        self.centre: str | None = None
        self.xy = np.zeros((0, 2))
        self.arrays = NodeArrays()
        self.edge_arrays = EdgeArrays()
        self._touching: dict[str, int] = {}

    # --- changes ------------------------------------------------------------------------

    def clear(self) -> None:
        self.nodes, self.edges, self.pending = {}, {}, {}
        self.expanded, self.centre = set(), None
        self._rebuild({})

    def add(self, found: Neighbourhood, positions: Mapping[str, tuple[float, float]]) -> None:
        """Take in an answer of the core; `positions` places its new nodes."""
        kept = self.positions()
        kept.update({i: p for i, p in positions.items() if i not in kept})
        self.nodes.update(found.nodes)
        self.edges.update(
            {
                k: e
                for k, e in found.edges.items()
                if e.source in self.nodes and e.target in self.nodes
            }
        )
        for owner in found.walked:
            self.expanded.add(owner)
            self.pending[owner] = []
        for owner, rest in found.pending.items():
            self.pending[owner] = [i for i in rest if i not in self.nodes]
        for owner, rest in self.pending.items():  # what arrived is no longer pending
            if any(i in found.nodes for i in rest):
                self.pending[owner] = [i for i in rest if i not in self.nodes]
        self._rebuild(kept)

    def update(
        self, nodes: Mapping[str, GraphNode], edges: Mapping[str, GraphEdge], gone: Iterable[str]
    ) -> None:
        """Nodes read again, the edges they have now among the shown, nodes no longer there."""
        kept = self.positions()
        fresh = {i: n for i, n in nodes.items() if i in self.nodes}
        self.nodes.update(fresh)
        loose: set[str] = set()
        for key in [k for k, e in self.edges.items() if e.source in fresh or e.target in fresh]:
            if key not in edges:
                edge = self.edges.pop(key)
                loose.update((edge.source, edge.target))
        self.edges.update(
            {k: e for k, e in edges.items() if e.source in self.nodes and e.target in self.nodes}
        )
        self._drop(set(gone))
        self._drop(self._detached(loose))
        self._rebuild(kept)

    def _detached(self, ids: set[str]) -> set[str]:
        """Of `ids`, the nodes no longer joined to an expanded node: the view shows a node
        because an expanded one leads to it, so one that lost that edge goes (as a fresh
        query would leave it out)."""
        ids = {i for i in ids if i in self.nodes and i not in self.expanded}
        if not ids:
            return set()
        held = set()
        for edge in self.edges.values():
            if edge.source in ids and edge.target in self.expanded:
                held.add(edge.source)
            if edge.target in ids and edge.source in self.expanded:
                held.add(edge.target)
        return ids - held

    def remove(self, ids: Iterable[str]) -> None:
        kept = self.positions()
        self._drop(set(ids))
        self._rebuild(kept)

    def remove_edges(self, keys: Iterable[str]) -> None:
        for key in keys:
            self.edges.pop(key, None)
        self._rebuild(self.positions())

    def _drop(self, ids: set[str]) -> None:
        if not ids:
            return
        for i in ids:
            self.nodes.pop(i, None)
            self.pending.pop(i, None)
            self.expanded.discard(i)
        self.edges = {
            k: e for k, e in self.edges.items() if e.source not in ids and e.target not in ids
        }
        if self.centre in ids:
            self.centre = None

    # --- positions ----------------------------------------------------------------------

    def positions(self) -> dict[str, tuple[float, float]]:
        return {i: (float(x), float(y)) for i, (x, y) in zip(self.arrays.ids, self.xy, strict=True)}

    def position(self, node_id: str) -> tuple[float, float] | None:
        row = self.arrays.index.get(node_id)
        return None if row is None else (float(self.xy[row, 0]), float(self.xy[row, 1]))

    def set_positions(self, ids: Iterable[str], xy: np.ndarray) -> None:
        """Positions of a layout step (rows of `xy` in the order of `ids`); unknown ids skipped."""
        index = self.arrays.index
        rows, src = [], []
        for k, node_id in enumerate(ids):
            row = index.get(node_id)
            if row is not None:
                rows.append(row)
                src.append(k)
        if rows:
            self.xy[np.array(rows)] = xy[np.array(src)]
            self.moved.emit()

    def move(self, node_id: str, x: float, y: float) -> None:
        row = self.arrays.index.get(node_id)
        if row is not None:
            self.xy[row] = (x, y)
            self.moved.emit()

    # --- derived ------------------------------------------------------------------------

    def hidden(self, node_id: str) -> int:
        """Neighbours of a node not shown (its "+N more"): what an expand left pending,
        else its edges the view does not hold (links to forgotten memories counted too)."""
        if node_id in self.expanded:
            return len(self.pending.get(node_id, ()))
        node = self.nodes.get(node_id)
        return 0 if node is None else max(0, node.degree - self._touching.get(node_id, 0))

    def edge_list(self) -> list[tuple[str, str]]:
        return [(e.source, e.target) for e in self.edges.values()]

    def _rebuild(self, kept: Mapping[str, tuple[float, float]]) -> None:
        ids = list(self.nodes)
        nodes = [self.nodes[i] for i in ids]
        a = NodeArrays(ids=ids, index={i: k for k, i in enumerate(ids)})
        a.trace = np.array([n.kind == TRACE for n in nodes], dtype=bool)
        a.radius = np.array([encodings.radius_of(n.retrieval_count) for n in nodes])
        a.alpha = np.array([encodings.alpha_step(n.strength) for n in nodes], dtype=np.int64)
        a.below_prune = np.array([n.below_prune for n in nodes], dtype=bool)
        a.superseded = np.array([n.superseded for n in nodes], dtype=bool)
        a.degree = np.array([n.degree for n in nodes], dtype=np.int64)
        a.strength = np.array([n.strength for n in nodes])
        a.created = np.array([n.created_at for n in nodes], dtype=np.int64)
        a.accessed = np.array(
            [-1 if n.last_accessed is None else n.last_accessed for n in nodes], dtype=np.int64
        )
        for by in encodings.COLOUR_BY:
            values = [encodings.value_of(n, by) for n in nodes]
            a.values[by] = np.array(values, dtype=object)
            a.slots[by] = np.array([encodings.slot_of(v, by) for v in values], dtype=np.int64)
        self.arrays = a
        self.xy = np.array([kept.get(i, (0.0, 0.0)) for i in ids], dtype=np.float64).reshape(-1, 2)
        self._rebuild_edges()
        self.changed.emit()

    def _rebuild_edges(self) -> None:
        index = self.arrays.index
        edges = list(self.edges.values())
        e = EdgeArrays(keys=[x.key for x in edges], kinds=[x.kind for x in edges])
        e.src = np.array([index[x.source] for x in edges], dtype=np.int64)
        e.dst = np.array([index[x.target] for x in edges], dtype=np.int64)
        e.directed = np.array([x.directed for x in edges], dtype=bool)
        groups: dict[tuple[str, str], int] = {}
        e.group = np.array(
            [groups.setdefault((x.kind, x.origin), len(groups)) for x in edges], dtype=np.int64
        )
        e.groups = list(groups)
        self.edge_arrays = e
        touching: dict[str, int] = {}
        for x in edges:
            touching[x.source] = touching.get(x.source, 0) + 1
            touching[x.target] = touching.get(x.target, 0) + 1
        self._touching = touching
