"""How the painter draws edges: smooth only when few are drawn, whatever the nodes in sight."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from memgui.core.graph_view import TRACE, GraphNode, Neighbourhood
from memgui.core.graph_view.rows import link_edge
from memgui.ui.graph import graph_painter
from memgui.ui.graph.graph_scene import GraphScene


class RecordingPainter(QPainter):
    """A painter that notes, for each path it draws, its pen width and antialiasing."""

    def __init__(self, image: QImage) -> None:
        super().__init__(image)
        self.paths: list[tuple[float, bool]] = []

    def drawPath(self, path) -> None:  # noqa: N802 (Qt's name)
        smooth = bool(self.renderHints() & QPainter.RenderHint.Antialiasing)
        self.paths.append((self.pen().widthF(), smooth))
        super().drawPath(path)


def _edges_drawn(edges: int) -> list[tuple[float, bool]]:
    """Ten nodes in sight at the centre, the rest far out on a ring; `edges` edges from
    the centre's nodes to the ring, each crossing the whole canvas."""
    found = Neighbourhood()
    inside = [f"in{i}" for i in range(10)]
    outside = [f"out{i}" for i in range(edges)]
    for i in inside + outside:
        found.nodes[i] = GraphNode(i, TRACE, i, "semantic")
    for k, far in enumerate(outside):
        edge = link_edge(inside[k % 10], far, "relates_to")
        found.edges[edge.key] = edge
    angle = np.linspace(0, 2 * np.pi, edges, endpoint=False)
    positions = {i: (500.0 + k, 500.0) for k, i in enumerate(inside)}
    positions |= {
        i: (500 + 5000 * np.cos(a), 500 + 5000 * np.sin(a))
        for i, a in zip(outside, angle, strict=True)
    }
    scene = GraphScene()
    scene.add(found, positions)
    view = graph_painter.View(
        scale=1.0,
        offset=QPointF(0, 0),
        nodes=np.ones(len(scene.arrays.ids), bool),
        edges=np.ones(len(scene.edge_arrays.keys), bool),
        colour_by="type",
        hub_degree=200,
        text=QColor("black"),
    )
    image = QImage(1000, 1000, QImage.Format.Format_ARGB32_Premultiplied)
    painter = RecordingPainter(image)
    graph_painter.paint(painter, scene, view, QRectF(0, 0, 1000, 1000))
    painter.end()
    return painter.paths


@pytest.mark.parametrize("edges", [50, graph_painter.SMOOTH_EDGES_BELOW])
def test_few_edges_are_drawn_smooth(qapp, edges):
    assert _edges_drawn(edges)[0] == (1.2, True)


def test_thousands_of_edges_across_few_nodes_are_drawn_one_hard_pixel(qapp):
    # Ten nodes in sight once drew 5,000 crossing edges antialiased: ~10x the cost.
    assert _edges_drawn(graph_painter.SMOOTH_EDGES_BELOW + 1)[0] == (0.0, False)
