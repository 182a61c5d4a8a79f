"""The graph view's core: neighbourhoods by index lookups, their layout, export, positions,
and the edits only the graph offers (connect, remove an edge, delete or merge nodes).

The app draws what this package answers (`memgui/ui/graph/`); nothing here knows Qt.
"""

from __future__ import annotations

from memgui.core.graph_edits import connect, delete_node, merge_nodes, remove_edge
from memgui.core.graph_view.export import FORMATS as EXPORT_FORMATS
from memgui.core.graph_view.export import export_whole, write_shown
from memgui.core.graph_view.layout import EDGE_LENGTH, LayoutProgress, lay_out, refine, seed
from memgui.core.graph_view.overview import Overview, overview
from memgui.core.graph_view.positions import PositionStore
from memgui.core.graph_view.query import (
    DEFAULT_MAX_NODES,
    MAX_NODES,
    RANKS,
    arrivals,
    ends_of,
    expand,
    hidden_counts,
    neighbourhood,
    refresh,
)
from memgui.core.graph_view.shapes import (
    EXPAND_LIMIT,
    GRAPH,
    HUB_DEGREE,
    LINK,
    NODE,
    PRUNE_THRESHOLD,
    TRACE,
    GraphEdge,
    GraphNode,
    Neighbourhood,
    edge_key,
    link_key,
)

__all__ = [
    "connect",
    "delete_node",
    "merge_nodes",
    "remove_edge",
    "Overview",
    "overview",
    "EXPORT_FORMATS",
    "export_whole",
    "write_shown",
    "EDGE_LENGTH",
    "LayoutProgress",
    "PositionStore",
    "lay_out",
    "refine",
    "seed",
    "DEFAULT_MAX_NODES",
    "EXPAND_LIMIT",
    "GRAPH",
    "HUB_DEGREE",
    "LINK",
    "MAX_NODES",
    "NODE",
    "PRUNE_THRESHOLD",
    "RANKS",
    "TRACE",
    "arrivals",
    "ends_of",
    "GraphEdge",
    "GraphNode",
    "Neighbourhood",
    "edge_key",
    "expand",
    "hidden_counts",
    "link_key",
    "neighbourhood",
    "refresh",
]
