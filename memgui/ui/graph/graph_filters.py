"""What the graph view hides: by type, scope, tag, link kind, strength and time, and the top hubs.

A filter is a value; `node_mask` and `edge_mask` turn it into one boolean per shown node and
edge with numpy, so a change applies at once however many nodes are shown (≤ 100 ms at
20,000 is the promise; ~5 ms is what it costs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memgui.ui.graph.graph_scene import GraphScene


@dataclass(frozen=True)
class GraphFilter:
    types: frozenset[str] | None = None  # None: every type shown
    scopes: frozenset[str] | None = None  # knowledge nodes count as the scope "graph node"
    tag: str = ""  # exact, as the table's tag filter
    hidden_kinds: frozenset[str] = frozenset()  # link kinds and knowledge edge types hidden
    min_strength: float = 0.0  # memories only: knowledge nodes have no strength
    max_strength: float = 1.0
    created_from: int | None = None  # epoch ms, inclusive
    created_to: int | None = None
    accessed_from: int | None = None  # memories accessed in this range (never: out)
    accessed_to: int | None = None
    hide_top_hubs: int = 0  # the N nodes of highest degree, above the hub threshold
    hub_degree: int = 200

    @property
    def active(self) -> bool:
        return self != GraphFilter(hub_degree=self.hub_degree)


def node_mask(scene: GraphScene, flt: GraphFilter) -> np.ndarray:
    a = scene.arrays
    n = len(a.ids)
    keep = np.ones(n, dtype=bool)
    if not n:
        return keep
    if flt.types is not None:
        keep &= np.isin(a.values["type"], list(flt.types))
    if flt.scopes is not None:
        keep &= np.isin(a.values["scope"], list(flt.scopes))
    if flt.tag:
        tag = flt.tag
        keep &= np.fromiter((tag in scene.nodes[i].tags for i in a.ids), dtype=bool, count=n)
    if flt.min_strength > 0.0 or flt.max_strength < 1.0:
        inside = (a.strength >= flt.min_strength) & (a.strength <= flt.max_strength)
        keep &= inside | ~a.trace
    if flt.created_from is not None:
        keep &= a.created >= flt.created_from
    if flt.created_to is not None:
        keep &= a.created <= flt.created_to
    if flt.accessed_from is not None:
        keep &= a.accessed >= flt.accessed_from
    if flt.accessed_to is not None:
        keep &= (a.accessed >= 0) & (a.accessed <= flt.accessed_to)
    if flt.hide_top_hubs > 0:
        hubs = np.flatnonzero(a.degree > flt.hub_degree)
        if len(hubs):
            ranked = hubs[np.lexsort((hubs, -a.degree[hubs]))]
            keep[ranked[: flt.hide_top_hubs]] = False
    if scene.centre is not None and scene.centre in a.index:
        keep[a.index[scene.centre]] = True  # what the view is opened on stays in sight
    return keep


def edge_mask(scene: GraphScene, flt: GraphFilter, nodes: np.ndarray) -> np.ndarray:
    e = scene.edge_arrays
    if not len(e.keys):
        return np.zeros(0, dtype=bool)
    keep = nodes[e.src] & nodes[e.dst]
    if flt.hidden_kinds:
        hidden_groups = [
            k for k, (kind, _origin) in enumerate(e.groups) if kind in flt.hidden_kinds
        ]
        if hidden_groups:
            keep &= ~np.isin(e.group, hidden_groups)
    shown: np.ndarray = keep
    return shown
