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

from memgui.core.graph_view import PRUNE_THRESHOLD, TRACE, GraphEdge, GraphNode, Neighbourhood
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
        self.settling = False  # a layout is moving nodes: frames are transient
        self.xy = np.zeros((0, 2))
        self.arrays = NodeArrays()
        self.edge_arrays = EdgeArrays()
        self._touching: dict[str, int] = {}
        self._version = 0  # counts rebuilds: a layout's row mapping is valid for one
        self._placing: tuple[object, np.ndarray, np.ndarray, object] | None = None

    # --- changes ------------------------------------------------------------------------

    def clear(self) -> None:
        self.nodes, self.edges, self.pending = {}, {}, {}
        self.expanded, self.centre = set(), None
        self._rebuild({})

    def replace(
        self,
        found: Neighbourhood,
        positions: Mapping[str, tuple[float, float]],
        centre: str | None = None,
    ) -> None:
        """Show `found` instead of what was shown (one rebuild, not a clear and an add)."""
        self.nodes, self.edges, self.pending = {}, {}, {}
        self.expanded, self.centre = set(), centre
        self.arrays = NodeArrays()
        self.xy = np.zeros((0, 2))
        self.add(found, positions)

    def add(self, found: Neighbourhood, positions: Mapping[str, tuple[float, float]]) -> None:
        """Take in an answer of the core; `positions` places its new nodes."""
        kept = self.positions()
        kept.update({i: p for i, p in positions.items() if i not in kept})
        self.nodes.update(found.nodes)
        nodes = self.nodes
        for key, edge in found.edges.items():
            if edge.source in nodes and edge.target in nodes:
                self.edges[key] = edge
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

    def set_positions(self, ids: tuple[str, ...] | list[str], xy: np.ndarray) -> None:
        """Positions of a layout step (rows of `xy` in the order of `ids`); unknown ids
        skipped. A job posts the same ids each step: where they go is worked out once."""
        key = (id(ids), len(ids), self._version)
        if self._placing is None or self._placing[0] != key:
            index = self.arrays.index
            pairs = [(index[i], k) for k, i in enumerate(ids) if i in index]
            rows = np.array([p[0] for p in pairs], dtype=np.int64)
            src = np.array([p[1] for p in pairs], dtype=np.int64)
            self._placing = (key, rows, src, ids)  # the ids are held: their id() stays theirs
        _key, rows, src, _ids = self._placing
        if len(rows):
            self.xy[rows] = xy[src]
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
        count = len(nodes)
        a.trace = np.fromiter((n.kind == TRACE for n in nodes), bool, count)
        retrievals = np.fromiter((n.retrieval_count for n in nodes), np.float64, count)
        a.radius = encodings.radii(retrievals)
        a.strength = np.fromiter((n.strength for n in nodes), np.float64, count)
        a.alpha = encodings.alpha_steps(a.strength)
        a.below_prune = a.trace & (a.strength < PRUNE_THRESHOLD)
        a.superseded = np.fromiter((n.superseded for n in nodes), bool, count)
        a.degree = np.fromiter((n.degree for n in nodes), np.int64, count)
        a.created = np.fromiter((n.created_at for n in nodes), np.int64, count)
        a.accessed = np.fromiter(
            (-1 if n.last_accessed is None else n.last_accessed for n in nodes), np.int64, count
        )
        for by in encodings.COLOUR_BY:
            values = [encodings.value_of(n, by) for n in nodes]
            slot = {v: encodings.slot_of(v, by) for v in set(values)}
            a.values[by] = np.array(values, dtype=object)
            a.slots[by] = np.fromiter((slot[v] for v in values), np.int64, count)
        self.arrays = a
        self._version += 1
        self.xy = np.array([kept.get(i, (0.0, 0.0)) for i in ids], dtype=np.float64).reshape(-1, 2)
        self._rebuild_edges()
        self.changed.emit()

    def _rebuild_edges(self) -> None:
        index = self.arrays.index
        edges = list(self.edges.values())
        count = len(edges)
        e = EdgeArrays(keys=list(self.edges), kinds=[x.kind for x in edges])
        e.src = np.fromiter((index[x.source] for x in edges), np.int64, count)
        e.dst = np.fromiter((index[x.target] for x in edges), np.int64, count)
        e.directed = np.fromiter((x.directed for x in edges), bool, count)
        groups: dict[tuple[str, str], int] = {}
        e.group = np.fromiter(
            (groups.setdefault((x.kind, x.origin), len(groups)) for x in edges), np.int64, count
        )
        e.groups = list(groups)
        self.edge_arrays = e
        ends = np.bincount(np.concatenate([e.src, e.dst]), minlength=len(index))
        self._touching = dict(zip(self.arrays.ids, ends.tolist(), strict=True))
