"""A pan or zoom moves the last full frame until the gesture settles, then draws in full;
anything else that changes what is drawn draws in full at once, and picking follows what
is on screen."""

from __future__ import annotations

from math import cos, sin

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage

from memgui.core.graph_view import TRACE, GraphNode, Neighbourhood
from memgui.core.graph_view.rows import link_edge
from memgui.ui.graph.graph_canvas import GraphCanvas
from memgui.ui.graph.graph_scene import GraphScene

WAIT_MS = 10_000


def _canvas(qtbot) -> GraphCanvas:
    """Two linked memories, 200 px apart, on a 400 × 300 canvas."""
    found = Neighbourhood()
    for i in ("a", "b"):
        found.nodes[i] = GraphNode(i, TRACE, i, "semantic", retrieval_count=20)
    edge = link_edge("a", "b", "relates_to")
    found.edges[edge.key] = edge
    scene = GraphScene()
    scene.add(found, {"a": (100.0, 150.0), "b": (300.0, 150.0)})
    canvas = GraphCanvas(scene)
    qtbot.addWidget(canvas)
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas, timeout=WAIT_MS)
    return canvas


def _frame(canvas: GraphCanvas) -> QImage:
    image = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    canvas.render(image)
    return image


def _is_node(image: QImage, x: float, y: float) -> bool:
    base = QColor(image.pixelColor(2, 2))
    return image.pixelColor(int(x), int(y)) != base


def test_a_gesture_moves_the_last_full_frame_then_draws_in_full(qtbot) -> None:
    canvas = _canvas(qtbot)
    first = _frame(canvas)
    assert _is_node(first, 100, 150) and _is_node(first, 300, 150)
    full = canvas.full_frames
    for _ in range(5):
        canvas.pan(10.0, 4.0)
        moved = _frame(canvas)
    assert canvas.in_gesture and canvas.full_frames == full  # each frame a blit
    assert _is_node(moved, 150, 170) and not _is_node(moved, 100, 150)
    assert canvas.node_at(QPointF(150, 170)) == "a"  # picked where it is seen
    assert canvas.node_at(QPointF(100, 150)) is None
    canvas.zoom(2.0, QPointF(150, 170))  # around "a": it stays, "b" goes 400 px right of it
    zoomed = _frame(canvas)
    assert canvas.full_frames == full and _is_node(zoomed, 150, 170)
    assert canvas.node_at(QPointF(150, 170)) == "a"
    qtbot.waitUntil(lambda: not canvas.in_gesture, timeout=WAIT_MS)
    settled = _frame(canvas)
    assert canvas.full_frames == full + 1
    assert _is_node(settled, 150, 170) and not _is_node(settled, 300, 150)


def test_a_change_during_a_gesture_draws_in_full(qtbot) -> None:
    canvas = _canvas(qtbot)
    _frame(canvas)
    canvas.pan(5.0, 0.0)
    _frame(canvas)
    full = canvas.full_frames
    canvas.set_colour_by("scope")
    _frame(canvas)
    assert canvas.in_gesture and canvas.full_frames == full + 1
    canvas.scene.move("a", 120.0, 160.0)  # a position changed (a layout step, a drag)
    after = _frame(canvas)
    assert canvas.full_frames == full + 2 and _is_node(after, 125, 160)
    canvas.pan(5.0, 0.0)
    _frame(canvas)
    assert canvas.full_frames == full + 2  # the new full frame is the one moved


def test_without_the_cache_every_gesture_frame_is_full(qtbot) -> None:
    canvas = _canvas(qtbot)
    canvas.cache_gestures = False
    _frame(canvas)
    full = canvas.full_frames
    for _ in range(3):
        canvas.pan(3.0, 0.0)
        _frame(canvas)
    assert canvas.full_frames == full + 3


def _crowded_canvas(qtbot, edges: int = 3000) -> GraphCanvas:
    """60 memories in a circle, `edges` links between them (some twice over: other kinds)."""
    found = Neighbourhood()
    ids = [f"n{k:02d}" for k in range(60)]
    for i in ids:
        found.nodes[i] = GraphNode(i, TRACE, i, "semantic")
    kinds = ("relates_to", "caused_by", "supersedes")
    pairs = [(a, b) for a in ids for b in ids if a < b]
    for k in range(edges):
        a, b = pairs[k % len(pairs)]
        edge = link_edge(a, b, kinds[k // len(pairs)])
        found.edges[edge.key] = edge
    scene = GraphScene()
    angle = [2 * 3.14159 * k / len(ids) for k in range(len(ids))]
    scene.add(
        found,
        {i: (200 + 120 * cos(a), 150 + 120 * sin(a)) for i, a in zip(ids, angle, strict=True)},
    )
    canvas = GraphCanvas(scene)
    qtbot.addWidget(canvas)
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas, timeout=WAIT_MS)
    return canvas


def test_a_settled_layout_frame_is_drawn_in_slices_and_is_the_full_frame(qtbot) -> None:
    canvas = _crowded_canvas(qtbot)
    canvas.scene.settling = True  # a layout moving the nodes: its frames keep to a budget
    canvas.scene.move("n00", 210.0, 150.0)
    moving = _frame(canvas)
    assert canvas.owes_full_frame is False  # still settling: nothing owed yet
    canvas._moving_budget = 200  # slices of 200 edges: many slices for 3,000 edges
    canvas.scene.settling = False
    canvas.update()
    shown = _frame(canvas)  # the first paint after settling: the slicing begins
    assert canvas.slicing and canvas.owes_full_frame
    assert shown == moving  # meanwhile the layout's last frame stays on screen
    full = canvas.full_frames
    qtbot.waitUntil(lambda: not canvas.owes_full_frame, timeout=WAIT_MS)
    assert canvas.full_frames == full + 1
    sliced = _frame(canvas)  # the completed frame, as it is
    canvas.redraw()
    at_once = _frame(canvas)
    assert canvas.full_frames == full + 2
    assert sliced == at_once and sliced != moving


def test_a_change_while_slicing_starts_the_frame_again(qtbot) -> None:
    canvas = _crowded_canvas(qtbot)
    canvas.scene.settling = True
    _frame(canvas)
    canvas._moving_budget = 100
    canvas.scene.settling = False
    canvas.update()
    _frame(canvas)
    assert canvas.slicing
    canvas.scene.move("n01", 100.0, 100.0)  # a node dragged meanwhile: drawn in full at once
    after = _frame(canvas)
    assert not canvas.slicing and not canvas.owes_full_frame
    assert _is_node(after, 100, 100)
