"""Faint memories (below the prune threshold) wear a dashed ring, stamped from a pixmap."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from memgui.core.graph_view import TRACE, GraphNode, Neighbourhood
from memgui.ui.graph import graph_painter
from memgui.ui.graph.graph_scene import GraphScene
from memgui.ui.theme import colours

CENTRES = {"faint": (200.0, 200.0), "firm": (600.0, 200.0), "faint2": (400.0, 600.0)}


def _painted(scale: float) -> tuple[QImage, GraphScene]:
    found = Neighbourhood()
    for i in CENTRES:
        strength = 0.01 if i.startswith("faint") else 1.0
        found.nodes[i] = GraphNode(i, TRACE, i, "semantic", strength=strength)
    scene = GraphScene()
    scene.add(found, dict(CENTRES))
    view = graph_painter.View(
        scale=scale,
        offset=QPointF(0, 0),
        nodes=np.ones(len(scene.arrays.ids), bool),
        edges=np.ones(0, bool),
        colour_by="type",
        hub_degree=200,
        text=QColor("black"),
    )
    image = QImage(1600, 1600, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("white"))
    painter = QPainter(image)
    graph_painter.paint(painter, scene, view, QRectF(0, 0, 1600, 1600))
    painter.end()
    return image, scene


def _ring_pixels(image: QImage, centre: tuple[float, float], r: float) -> list[bool]:
    """Whether each of 180 points on the circle of radius `r` is the ring's colour."""
    ring = QColor(colours.GRAPH_HUB)
    marks = []
    for k in range(180):
        a = 2 * math.pi * k / 180
        pixel = image.pixelColor(
            round(centre[0] + r * math.cos(a)), round(centre[1] + r * math.sin(a))
        )
        near = abs(pixel.red() - ring.red()) + abs(pixel.green() - ring.green()) < 120
        marks.append(near and pixel.blue() < 200)
    return marks


def test_a_faint_memory_wears_a_dashed_ring_and_a_firm_one_none(qapp):
    for scale in (1.0, 2.0):  # the ring follows the zoom (another size, another stamp)
        image, scene = _painted(scale)
        a = scene.arrays
        for node, faint in (("faint", True), ("faint2", True), ("firm", False)):
            row = a.index[node]
            assert bool(a.below_prune[row]) == faint
            r = max(float(a.radius[row]) * scale, graph_painter.MIN_PIXELS) + 2
            x, y = CENTRES[node]
            marks = _ring_pixels(image, (x * scale, y * scale), r)
            if faint:
                assert 0.3 < sum(marks) / len(marks) < 0.95, (node, scale, sum(marks))  # dashed
            else:
                assert not any(marks), (node, scale)
