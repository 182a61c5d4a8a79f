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


def _edges_drawn(edges: int, **moving: object) -> list[tuple[float, bool]]:
    return _paint(edges, **moving)[0]


def _paint(edges: int, **moving: object) -> tuple[list[tuple[float, bool]], graph_painter.Painted]:
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
        **moving,  # type: ignore[arg-type]
    )
    image = QImage(1000, 1000, QImage.Format.Format_ARGB32_Premultiplied)
    painter = RecordingPainter(image)
    painted = graph_painter.paint(painter, scene, view, QRectF(0, 0, 1000, 1000))
    painter.end()
    return painter.paths, painted


@pytest.mark.parametrize("edges", [50, graph_painter.SMOOTH_EDGES_BELOW])
def test_few_edges_are_drawn_smooth(qapp, edges):
    assert _edges_drawn(edges)[0] == (1.2, True)


def test_thousands_of_edges_across_few_nodes_are_drawn_one_hard_pixel(qapp):
    # Ten nodes in sight once drew 5,000 crossing edges antialiased: ~10x the cost.
    assert _edges_drawn(graph_painter.SMOOTH_EDGES_BELOW + 1)[0] == (0.0, False)


def test_a_layouts_frame_keeps_to_its_edge_budget_in_hard_pixels(qapp):
    paths, painted = _paint(3000, moving=True, edge_budget=700)
    assert painted.edges_drawn == 700 and painted.edge_ms > 0
    assert paths[0] == (0.0, False)  # never antialiased while nodes move
    _paths, settled = _paint(3000)
    assert settled.edges_drawn == 3000


def test_the_next_layout_frame_draws_what_fits_its_time():
    def painted(drawn: int, ms: float) -> graph_painter.Painted:
        nothing = np.zeros(0)
        return graph_painter.Painted(nothing, nothing, nothing, edges_drawn=drawn, edge_ms=ms)

    ms = graph_painter.MOVING_EDGE_MS
    assert graph_painter.moving_budget(painted(3000, 2 * ms)) == 1500  # half as many
    assert graph_painter.moving_budget(painted(3000, ms / 2)) == 6000  # twice as many
    assert graph_painter.moving_budget(painted(100, 1000.0)) == graph_painter.MOVING_EDGES_LEAST
    assert graph_painter.moving_budget(painted(9000, 1.0)) == graph_painter.EDGE_BUDGET
