"""The graph view's core: neighbourhoods by index lookups, their layout, export, positions.

The app draws what this package answers (`memgui/ui/graph/`); nothing here knows Qt.
"""

from __future__ import annotations

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
