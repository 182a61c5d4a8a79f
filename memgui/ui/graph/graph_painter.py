"""Drawing the scene: every batch in one QPainter call, and detail only where it can be seen.

Edges are one path per kind and nodes one `drawPoints` per (colour, size, opacity): a few
dozen calls for 20,000 nodes whatever their number. Level of detail: round nodes, arrows,
labels, edge labels, dashed outlines and hub badges appear only when few enough nodes are in
sight for them to be read; far out, nodes are squares of at least two pixels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen, QPixmap

from memgui.ui.graph import encodings
from memgui.ui.graph.graph_scene import GraphScene
from memgui.ui.graph.paint_batch import polygon, segments
from memgui.ui.theme import colours

ROUND_BELOW = 4000  # visible nodes drawn round (square above: the same at that density)
DETAIL_BELOW = 3000  # dashed outlines and strikes
LABELS_BELOW = 250  # every visible node labelled
LABELS_MOST = 400  # labels drawn at most (the highest degree first)
EDGE_LABELS_BELOW = 150
ARROWS_BELOW = 3000
EDGE_BUDGET = 12_000  # edges drawn at most in one frame
# While a layout moves the nodes, a frame's edges are drawn in about this long, so the GUI
# thread stays free between frames: the budget follows the last frame's time per edge.
MOVING_EDGE_MS = 12.0
MOVING_EDGES_LEAST = 500
MOVING_EDGES_FIRST = 500  # a layout's first frame, before its time per edge is known
SMOOTH_EDGES_BELOW = 2000  # edges drawn antialiased and 1.2 px wide (above: one hard pixel)
MIN_PIXELS = 1.0  # a node's radius on screen never falls below this


@dataclass
class View:
    """What the canvas hands the painter: transform, masks, colours, what is picked."""

    scale: float
    offset: QPointF
    nodes: np.ndarray  # the filter's node mask
    edges: np.ndarray  # the filter's edge mask
    colour_by: str
    hub_degree: int
    text: QColor
    selected: set[str] = field(default_factory=set)
    more: dict[str, int] = field(default_factory=dict)  # expanded nodes with "+N more"
    edge_budget: int = EDGE_BUDGET
    moving: bool = False  # a layout's frame: hard pixels, the budget kept to its time


@dataclass
class Painted:
    """What was drawn where, for hit tests: screen positions, radii, "+N more" spots."""

    xy: np.ndarray
    radius: np.ndarray
    visible: np.ndarray
    more_spots: list[tuple[str, QRectF]] = field(default_factory=list)
    edges_drawn: int = 0
    edge_ms: float = 0.0


@dataclass
class Frame:
    """One frame's facts, shared by its drawing steps."""

    scene: GraphScene
    view: View
    xy: np.ndarray  # screen positions
    radius: np.ndarray  # screen radii
    visible: np.ndarray  # passed the filter and in sight
    count: int  # how many are visible


def screen_positions(scene: GraphScene, view: View) -> np.ndarray:
    moved: np.ndarray = scene.xy * view.scale + np.array([view.offset.x(), view.offset.y()])
    return moved


def paint(painter: QPainter, scene: GraphScene, view: View, rect: QRectF) -> Painted:
    """Draw the whole frame at once."""
    steps = paint_in_slices(painter, scene, view, rect, slice_edges=None)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            painted: Painted = done.value
            return painted


def paint_in_slices(
    painter: QPainter, scene: GraphScene, view: View, rect: QRectF, slice_edges: int | None
) -> Generator[None, None, Painted]:
    """Draw the frame, pausing (a `yield`) after each `slice_edges` edges drawn, so a caller
    can let other events run between slices (None: no pause); returns what was drawn."""
    a = scene.arrays
    xy = screen_positions(scene, view)
    radius = np.maximum(a.radius * view.scale, MIN_PIXELS)
    margin = float(radius.max()) + 2 if len(radius) else 0.0
    inside = (
        (xy[:, 0] > rect.left() - margin)
        & (xy[:, 0] < rect.right() + margin)
        & (xy[:, 1] > rect.top() - margin)
        & (xy[:, 1] < rect.bottom() + margin)
    )
    visible = view.nodes & inside
    frame = Frame(scene, view, xy, radius, visible, int(visible.sum()))
    painted = Painted(xy, radius, visible)
    started = time.perf_counter()
    painted.edges_drawn = yield from _edges(painter, frame, rect, slice_edges)
    painted.edge_ms = (time.perf_counter() - started) * 1000
    _nodes(painter, frame)
    if frame.count <= DETAIL_BELOW:
        _marks(painter, frame)
    _hubs(painter, frame)
    _selection(painter, frame)
    _labels(painter, frame)
    painted.more_spots = _more(painter, frame)
    return painted


def _edges(
    painter: QPainter, frame: Frame, rect: QRectF, slice_edges: int | None
) -> Generator[None, None, int]:
    """Draw the edges in sight (the shortest `view.edge_budget` of them); how many. With
    `slice_edges`, a pause after each slice of that many."""
    scene, view, xy, count = frame.scene, frame.view, frame.xy, frame.count
    e = scene.edge_arrays
    if not len(e.keys):
        return 0
    a, b = xy[e.src], xy[e.dst]
    crosses = (
        (np.maximum(a[:, 0], b[:, 0]) >= rect.left())
        & (np.minimum(a[:, 0], b[:, 0]) <= rect.right())
        & (np.maximum(a[:, 1], b[:, 1]) >= rect.top())
        & (np.minimum(a[:, 1], b[:, 1]) <= rect.bottom())
    )
    shown = view.edges & crosses
    drawn = int(shown.sum())
    budget = view.edge_budget
    if drawn > budget:
        # Far out and dense: the shortest edges on screen, which show how neighbours hang
        # together; the long ones would cross the whole canvas (and cost by their length).
        rows = np.flatnonzero(shown)
        length = ((a[rows] - b[rows]) ** 2).sum(axis=1)
        shown = np.zeros_like(shown)
        shown[rows[np.argpartition(length, budget)[:budget]]] = True
    # Antialiased wide lines cost ~10× hard pixels: a few hundred nodes in sight can still
    # have thousands of long edges crossing the canvas, so the edges drawn decide too.
    smooth = not view.moving and count <= DETAIL_BELOW and min(drawn, budget) <= SMOOTH_EDGES_BELOW
    arrows = count <= ARROWS_BELOW and view.scale >= 0.5
    labels = int(shown.sum()) <= EDGE_LABELS_BELOW and view.scale >= 0.8
    step = slice_edges or len(e.keys)
    for group, (kind, origin) in enumerate(e.groups):
        members = np.flatnonzero(shown & (e.group == group))
        pen = QPen(encodings.edge_colour(kind, origin))
        pen.setWidthF(1.2 if smooth else 0.0)  # 0: one pixel, the fastest
        for first in range(0, len(members), step):
            rows = members[first : first + step]
            # Set for each slice: a frame drawn in slices has its painter begun anew.
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, smooth)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(pen)
            start, end = a[rows], b[rows]
            painter.drawPath(segments(start, end))
            if arrows:
                directed = e.directed[rows]
                if directed.any():
                    tip_radius = np.maximum(scene.arrays.radius[e.dst[rows]] * view.scale, 1.0)
                    heads = _arrow_heads(start[directed], end[directed], tip_radius[directed])
                    painter.drawPath(heads)
            if labels:
                painter.setPen(view.text)
                middle = (start + end) / 2
                for x, y in middle:
                    painter.drawText(QPointF(x + 3, y - 3), kind)
            if slice_edges is not None:
                yield
    return min(drawn, budget)


def moving_budget(painted: Painted) -> int:
    """The next layout frame's edge budget: as many edges as the last frame drew in
    `MOVING_EDGE_MS` (never fewer than `MOVING_EDGES_LEAST`, nor more than `EDGE_BUDGET`)."""
    if painted.edges_drawn <= 0 or painted.edge_ms <= 0:
        return EDGE_BUDGET
    rate = painted.edges_drawn / painted.edge_ms
    return int(min(EDGE_BUDGET, max(MOVING_EDGES_LEAST, rate * MOVING_EDGE_MS)))


def _arrow_heads(start: np.ndarray, end: np.ndarray, radius: np.ndarray) -> QPainterPath:
    delta = end - start
    length = np.sqrt((delta**2).sum(axis=1)) + 1e-9
    unit = delta / length[:, None]
    tip = end - unit * radius[:, None]
    side = np.stack([-unit[:, 1], unit[:, 0]], axis=1)
    back = tip - unit * 7
    left, right = back + side * 3.5, back - side * 3.5
    return segments(np.concatenate([tip, tip]), np.concatenate([left, right]))


def _nodes(painter: QPainter, frame: Frame) -> None:
    scene, view, xy = frame.scene, frame.view, frame.xy
    radius, visible, count = frame.radius, frame.visible, frame.count
    rows = np.flatnonzero(visible)
    if not len(rows):
        return
    a = scene.arrays
    slots = a.slots[view.colour_by][rows]
    steps = a.alpha[rows]
    sizes = np.round(radius[rows] * 2).astype(np.int64)
    keys = (slots * encodings.ALPHA_STEPS + steps) * 4096 + np.minimum(sizes, 4095)
    order = np.argsort(keys, kind="stable")
    keys_sorted = keys[order]
    cuts = np.flatnonzero(np.diff(keys_sorted)) + 1
    palette = encodings.palette()
    round_nodes = count <= ROUND_BELOW
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, round_nodes)
    cap = Qt.PenCapStyle.RoundCap if round_nodes else Qt.PenCapStyle.SquareCap
    for chunk in np.split(order, cuts):
        key = int(keys[chunk[0]])
        size = key % 4096
        slot, step = divmod(key // 4096, encodings.ALPHA_STEPS)
        colour = QColor(palette[slot])
        colour.setAlphaF(encodings.alpha_of(step))
        pen = QPen(colour)
        pen.setWidthF(max(2.0, float(size)))
        pen.setCapStyle(cap)
        painter.setPen(pen)
        painter.drawPoints(polygon(xy[rows[chunk]]))


def _marks(painter: QPainter, frame: Frame) -> None:
    scene, xy, radius, visible = frame.scene, frame.xy, frame.radius, frame.visible
    a = scene.arrays
    faint = np.flatnonzero(visible & a.below_prune)
    if len(faint):
        # A dashed ring stroked per node cost ~50 ms for 1,500 faint memories: each size's
        # ring is drawn once into a pixmap, then stamped (half-pixel sizes: no visible step).
        ratio = painter.device().devicePixelRatioF()
        sizes = np.round((radius[faint] + 2) * 2) / 2
        for row, r in zip(faint.tolist(), sizes.tolist(), strict=True):
            ring = _dashed_ring(r, ratio)
            half = r + RING_MARGIN
            painter.drawPixmap(QPointF(float(xy[row, 0]) - half, float(xy[row, 1]) - half), ring)
    struck = np.flatnonzero(visible & a.superseded)
    if len(struck):
        reach = radius[struck][:, None] + 2
        start = xy[struck] + np.hstack([-reach, reach])
        end = xy[struck] + np.hstack([reach, -reach])
        pen = QPen(QColor(colours.GRAPH_MARK))
        pen.setWidthF(2.0)
        painter.setPen(pen)
        painter.drawPath(segments(start, end))


RING_MARGIN = 2.0  # room around a ring's circle in its pixmap for the pen and antialiasing
RINGS_KEPT = 256
_rings: dict[tuple[float, float, str], QPixmap] = {}


def _dashed_ring(r: float, ratio: float) -> QPixmap:
    """The dashed outline of a faint memory of radius `r` (device pixel ratio `ratio`)."""
    key = (r, ratio, colours.GRAPH_HUB)
    ring = _rings.get(key)
    if ring is None:
        if len(_rings) >= RINGS_KEPT:
            _rings.clear()  # sizes follow the zoom: keep the ones in use now
        side = 2 * (r + RING_MARGIN)
        ring = QPixmap(math.ceil(side * ratio), math.ceil(side * ratio))
        ring.setDevicePixelRatio(ratio)
        ring.fill(Qt.GlobalColor.transparent)
        pen = QPen(QColor(colours.GRAPH_HUB))
        pen.setStyle(Qt.PenStyle.DashLine)
        pen.setWidthF(1.2)
        stamp = QPainter(ring)
        stamp.setRenderHint(QPainter.RenderHint.Antialiasing)
        stamp.setPen(pen)
        stamp.setBrush(Qt.BrushStyle.NoBrush)
        stamp.drawEllipse(QPointF(side / 2, side / 2), r, r)
        stamp.end()
        _rings[key] = ring
    return ring


def _hubs(painter: QPainter, frame: Frame) -> None:
    scene, view, xy, visible = frame.scene, frame.view, frame.xy, frame.visible
    a = scene.arrays
    hubs = np.flatnonzero(visible & (a.degree > view.hub_degree))
    if not len(hubs):
        return
    font = QFont(painter.font())
    font.setBold(True)
    painter.setFont(font)
    metrics = QFontMetrics(font)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for row in hubs[:500]:
        text = f"{int(a.degree[row]):,}"
        width = metrics.horizontalAdvance(text) + 10
        height = metrics.height() + 4
        x, y = float(xy[row, 0]), float(xy[row, 1])
        box = QRectF(x - width / 2, y - height / 2, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colours.GRAPH_HUB))
        painter.drawRoundedRect(box, height / 2, height / 2)
        painter.setPen(QColor(colours.GRAPH_LABEL_DARK))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
    painter.setFont(QFont(font.family(), font.pointSize()))


def _selection(painter: QPainter, frame: Frame) -> None:
    scene, view, xy, radius = frame.scene, frame.view, frame.xy, frame.radius
    if not view.selected:
        return
    pen = QPen(QColor(colours.GRAPH_SELECTED))
    pen.setWidthF(3.0)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for node_id in view.selected:
        row = scene.arrays.index.get(node_id)
        if row is not None:
            r = float(radius[row]) + 4
            painter.drawEllipse(QPointF(float(xy[row, 0]), float(xy[row, 1])), r, r)


def _labels(painter: QPainter, frame: Frame) -> None:
    scene, view, xy = frame.scene, frame.view, frame.xy
    radius, visible, count = frame.radius, frame.visible, frame.count
    a = scene.arrays
    rows = np.flatnonzero(visible)
    if count > LABELS_BELOW and view.scale < 1.5:
        wanted = {a.index[i] for i in view.selected if i in a.index}
        if scene.centre in a.index:
            wanted.add(a.index[scene.centre])
        rows = np.array(sorted(r for r in wanted if visible[r]), dtype=np.int64)
    elif len(rows) > LABELS_MOST:
        rows = rows[np.argsort(-a.degree[rows], kind="stable")[:LABELS_MOST]]
    painter.setPen(view.text)
    metrics = QFontMetrics(painter.font())
    for row in rows:
        label = scene.nodes[a.ids[row]].label
        text = metrics.elidedText(label, Qt.TextElideMode.ElideRight, 220)
        x = float(xy[row, 0] + radius[row] + 4)
        painter.drawText(QPointF(x, float(xy[row, 1]) + metrics.ascent() / 2 - 1), text)


def _more(painter: QPainter, frame: Frame) -> list[tuple[str, QRectF]]:
    scene, view, xy = frame.scene, frame.view, frame.xy
    radius, visible = frame.radius, frame.visible
    spots: list[tuple[str, QRectF]] = []
    if not view.more:
        return spots
    metrics = QFontMetrics(painter.font())
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for node_id, count in view.more.items():
        row = scene.arrays.index.get(node_id)
        if row is None or not visible[row]:
            continue
        text = f"+{count:,} more"
        width = metrics.horizontalAdvance(text) + 12
        height = metrics.height() + 4
        x = float(xy[row, 0]) - width / 2
        y = float(xy[row, 1] + radius[row]) + 6
        box = QRectF(x, y, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(colours.GRAPH_MORE))
        painter.drawRoundedRect(box, 6, 6)
        painter.setPen(QColor(colours.GRAPH_LABEL_DARK))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        spots.append((node_id, box))
    return spots
