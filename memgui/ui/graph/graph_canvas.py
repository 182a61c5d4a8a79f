"""The canvas of the graph view: pan, zoom, pick, drag a link, move a node.

It draws the scene through `graph_painter` and says what the person did through signals;
it changes nothing itself. A drag from one node onto another asks for a link
(`link_dragged`), a Shift-drag moves the node (`node_moved` on release), a double-click
expands (`node_activated`), a click on a "+N more" pill brings more (`more_activated`).

A pan or zoom is a gesture: while it goes on, each frame shows the last full frame moved
and scaled (a pixmap: a blit, whatever the number of nodes), as map viewers do; once no
pan or zoom has come for `SETTLE_MS` the frame is drawn in full again. Anything else that
changes what is drawn (the scene, positions, filter, colours, selection) draws in full; a
repaint that changes nothing (an expose) shows the last full frame as it is. A layout's
settled frame is drawn in slices (`canvas_frames`), so the GUI thread is never held long.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QWheelEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from memgui.ui.graph import graph_filters, graph_painter
from memgui.ui.graph.canvas_frames import FullFrame, SlicedFrame
from memgui.ui.graph.graph_filters import GraphFilter
from memgui.ui.graph.graph_painter import Painted, View
from memgui.ui.graph.graph_scene import GraphScene
from memgui.ui.theme import colours

DRAG_PIXELS = 6
ZOOM_STEP = 1.15
MIN_SCALE, MAX_SCALE = 0.01, 8.0
MAX_FIT_SCALE = 1.5  # a fit never blows a few nodes up
PICK_SLACK = 4.0
FIT_LABEL_ROOM = 180  # pixels kept right of the nodes for their labels
SETTLE_MS = 150  # a pan or zoom this long ago ended its gesture: the next frame is full


class GraphCanvas(QWidget):
    node_clicked = Signal(str, object)  # (id, Qt.KeyboardModifier)
    background_clicked = Signal()
    node_activated = Signal(str)
    more_activated = Signal(str)
    link_dragged = Signal(str, str)  # (from, to)
    node_moved = Signal(str)
    context_requested = Signal(str, QPoint)  # ("" on the background, global position)
    filtered = Signal()  # what is shown changed: the scene or the filter

    def __init__(self, scene: GraphScene, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scene = scene
        self.scale = 1.0
        self.offset = QPointF(0.0, 0.0)
        self.colour_by = "type"
        self.filter = GraphFilter()
        self.selected: list[str] = []
        self.more: dict[str, int] = {}
        self.node_mask = np.zeros(0, dtype=bool)
        self.edge_mask = np.zeros(0, dtype=bool)
        self._painted: Painted | None = None
        self._moving_budget = graph_painter.MOVING_EDGES_FIRST  # a layout frame's edges
        self._press: QPointF | None = None
        self._press_node: str | None = None
        self._dragging = ""  # "", "pan", "link" or "move"
        self._drag_end: QPointF | None = None
        self._last: QPointF | None = None
        self.cache_gestures = True  # False: every frame of a pan or zoom drawn in full
        self.full_frames = 0  # frames drawn in full (the rest: the last one moved)
        self._full: FullFrame | None = None
        self._content = 0  # counts changes of what is drawn, the view's transform aside
        self._gesture = False
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self._slicing: SlicedFrame | None = None
        self._spare: QPixmap | None = None  # the full frame's pixmap before the last
        self._slices = QTimer(self)  # the next slice, once other events have run
        self._slices.setSingleShot(True)
        self._slices.setInterval(0)
        self._slices.timeout.connect(self._next_slice)
        self.setMinimumSize(200, 200)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        scene.changed.connect(self.refilter)
        scene.moved.connect(self.redraw)
        self.refilter()

    # --- state --------------------------------------------------------------------------

    def set_filter(self, flt: GraphFilter) -> None:
        self.filter = flt
        self.refilter()

    def refilter(self) -> None:
        self.node_mask = graph_filters.node_mask(self.scene, self.filter)
        self.edge_mask = graph_filters.edge_mask(self.scene, self.filter, self.node_mask)
        self.filtered.emit()
        self.redraw()

    def redraw(self) -> None:
        """What is drawn changed: the next frame is drawn in full."""
        self._content += 1
        self.update()

    def _gesture_step(self) -> None:
        """A pan or zoom: frames move the last full one until the gesture settles."""
        self._gesture = True
        self._settle.start()
        self.update()

    def _settled(self) -> None:
        self._gesture = False
        self.update()

    @property
    def in_gesture(self) -> bool:
        return self._gesture

    @property
    def slicing(self) -> bool:
        """A frame is being drawn in slices (the one on screen is the layout's last)."""
        return self._slicing is not None

    @property
    def owes_full_frame(self) -> bool:
        """A layout has settled and the frame on screen is still its last moving one (its
        full frame is being drawn in slices, or not begun)."""
        full = self._full
        moving = full is not None and full.moving and not self.scene.settling
        return self._slicing is not None or moving

    def visible_ids(self) -> list[str]:
        ids = self.scene.arrays.ids
        return [ids[r] for r in np.flatnonzero(self.node_mask)]

    def set_colour_by(self, by: str) -> None:
        self.colour_by = by
        self.redraw()

    def set_selected(self, ids: list[str]) -> None:
        self.selected = list(ids)
        self.redraw()

    def set_more(self, more: dict[str, int]) -> None:
        self.more = dict(more)
        self.redraw()

    # --- where things are ---------------------------------------------------------------

    def to_world(self, point: QPointF) -> tuple[float, float]:
        return (
            (point.x() - self.offset.x()) / self.scale,
            (point.y() - self.offset.y()) / self.scale,
        )

    def to_screen(self, x: float, y: float) -> QPointF:
        return QPointF(x * self.scale + self.offset.x(), y * self.scale + self.offset.y())

    def centre_on(self, node_id: str) -> None:
        where = self.scene.position(node_id)
        if where is not None:
            self.offset = QPointF(
                self.width() / 2 - where[0] * self.scale, self.height() / 2 - where[1] * self.scale
            )
            self.redraw()

    def fit(self, ids: list[str] | None = None) -> None:
        """Zoom and pan so that `ids` (else every visible node) fill the canvas."""
        a = self.scene.arrays
        rows = (
            np.array([a.index[i] for i in ids if i in a.index], dtype=np.int64)
            if ids is not None
            else np.flatnonzero(self.node_mask)
        )
        if not len(rows):
            return
        xy = self.scene.xy[rows]
        low, high = xy.min(axis=0), xy.max(axis=0)
        span = np.maximum(high - low, 1.0)
        labels = FIT_LABEL_ROOM if len(rows) <= graph_painter.LABELS_BELOW else 0
        room = np.array([max(self.width() - 80 - labels, 50), max(self.height() - 80, 50)])
        self.scale = float(min(MAX_FIT_SCALE, max(MIN_SCALE, min(room / span))))
        middle = (low + high) / 2 + np.array([labels / 2 / self.scale, 0.0])
        self.offset = QPointF(
            self.width() / 2 - middle[0] * self.scale, self.height() / 2 - middle[1] * self.scale
        )
        self.redraw()

    def zoom(self, factor: float, anchor: QPointF | None = None) -> None:
        anchor = anchor or QPointF(self.width() / 2, self.height() / 2)
        world = self.to_world(anchor)
        self.scale = float(min(MAX_SCALE, max(MIN_SCALE, self.scale * factor)))
        self.offset = QPointF(
            anchor.x() - world[0] * self.scale, anchor.y() - world[1] * self.scale
        )
        self._gesture_step()

    def pan(self, dx: float, dy: float) -> None:
        self.offset = QPointF(self.offset.x() + dx, self.offset.y() + dy)
        self._gesture_step()

    def _in_painted(self, point: QPointF) -> tuple[QPointF, float]:
        """`point` in the last full frame's coordinates, and that frame's scale over now's."""
        full = self._full
        if full is None or (full.scale == self.scale and full.offset == self.offset):
            return point, 1.0
        return full.to_frame(point, self.scale, self.offset), full.scale / self.scale

    def node_at(self, point: QPointF) -> str | None:
        painted = self._painted
        if painted is None or not len(painted.xy):
            return None
        point, shrink = self._in_painted(point)
        d2 = ((painted.xy - np.array([point.x(), point.y()])) ** 2).sum(axis=1)
        reach = (np.maximum(painted.radius, 3.0) + PICK_SLACK * shrink) ** 2
        hits = np.flatnonzero(painted.visible & (d2 <= reach))
        if not len(hits):
            return None
        return self.scene.arrays.ids[int(hits[np.argmin(d2[hits])])]

    def more_at(self, point: QPointF) -> str | None:
        point = self._in_painted(point)[0]
        for owner, box in self._painted.more_spots if self._painted else []:
            if box.contains(point):
                return owner
        return None

    # --- painting -----------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        rect = QRectF(self.rect())
        if not self._moved_frame(painter, rect) and not self._settled_in_slices(painter, rect):
            self._stop_slicing()
            self._full = self._full_frame(rect)
            painter.drawPixmap(0, 0, self._full.pixmap)
        painter.end()

    def _fits(self, pixmap: QPixmap) -> bool:
        ratio = self.devicePixelRatioF()
        return pixmap.devicePixelRatio() == ratio and pixmap.size() == self.size() * ratio

    def _moved_frame(self, painter: QPainter, rect: QRectF) -> bool:
        """During a gesture, the last full frame moved and scaled (out of one, the same frame
        when nothing changed: an expose); False when it cannot be."""
        full = self._full
        if (
            full is None
            or not (self._gesture and self.cache_gestures)
            and (full.scale != self.scale or full.offset != self.offset)
            or full.content != self._content
            or full.moving
            and not self.scene.settling
            or not self._fits(full.pixmap)
        ):
            return False
        full.draw_moved(painter, rect, self.scale, self.offset, self.palette().base())
        return True

    def _settled_in_slices(self, painter: QPainter, rect: QRectF) -> bool:
        """A layout has settled: its last frame stays on screen while the full one is drawn
        in slices of as many edges as that frame drew in its time budget."""
        full = self._full
        sliced = self._slicing
        if sliced is not None and (
            sliced.content != self._content or sliced.arrays is not self.scene.arrays
        ):
            self._stop_slicing()  # what it draws changed since (a node dragged): at once
            return False
        if self._slicing is None:
            if (
                full is None
                or not full.moving
                or self.scene.settling
                or full.arrays is not self.scene.arrays
                or self._dragging == "link"
                or not self._fits(full.pixmap)
                or len(self.node_mask) != len(self.scene.arrays.ids)
            ):
                return False
            budget = self._moving_budget
            pixmap, frame_painter, view = self._begin_frame(rect)
            frame_painter.end()  # begun again for each slice: none stays open between
            steps = graph_painter.paint_in_slices(frame_painter, self.scene, view, rect, budget)
            self._slicing = SlicedFrame(
                pixmap,
                frame_painter,
                self.font(),
                steps,
                self.scale,
                QPointF(self.offset),
                self._content,
                self.scene.arrays,
            )
            self._slices.start()
            full.moving = False  # once: a change meanwhile draws in full at once
        if full is not None:
            full.draw_moved(painter, rect, self.scale, self.offset, self.palette().base())
        return True

    def _next_slice(self) -> None:
        sliced = self._slicing
        if sliced is None:
            return
        if (
            sliced.content != self._content
            or sliced.arrays is not self.scene.arrays
            or not self._fits(sliced.pixmap)
        ):
            self._stop_slicing()  # what it draws changed: the next paint starts again
            self.update()
            return
        painted = sliced.step()
        if painted is None:
            self._slices.start()
            return
        self._slicing = None
        self._painted = painted
        self._full = sliced.full()
        self.full_frames += 1
        self.update()

    def _stop_slicing(self) -> None:
        if self._slicing is not None:
            self._slicing.abandon()
            self._slicing = None

    def _spare_pixmap(self) -> QPixmap:
        """A pixmap to draw the next full frame into: the one before the frame on screen,
        when it fits, else a new one (a canvas of 1400 × 900 is 5 MB to allocate)."""
        spare, self._spare = self._spare, self._full.pixmap if self._full else None
        if spare is not None and self._fits(spare) and spare is not self._spare:
            return spare
        ratio = self.devicePixelRatioF()
        pixmap = QPixmap(self.size() * ratio)
        pixmap.setDevicePixelRatio(ratio)
        return pixmap

    def _begin_frame(self, rect: QRectF) -> tuple[QPixmap, QPainter, View]:
        """A pixmap the size of the canvas, a painter on it, and what the painter draws."""
        pixmap = self._spare_pixmap()
        painter = QPainter(pixmap)
        painter.setFont(self.font())
        painter.fillRect(rect, self.palette().base())
        view = View(
            scale=self.scale,
            offset=self.offset,
            nodes=self.node_mask,
            edges=self.edge_mask,
            colour_by=self.colour_by,
            hub_degree=self.filter.hub_degree,
            text=self.palette().text().color(),
            selected=set(self.selected),
            more=self.more,
        )
        if self.scene.settling:
            view.moving, view.edge_budget = True, self._moving_budget
        else:
            self._moving_budget = graph_painter.MOVING_EDGES_FIRST
        return pixmap, painter, view

    def _full_frame(self, rect: QRectF) -> FullFrame:
        """Draw everything into a pixmap the size of the canvas, at once."""
        pixmap, painter, view = self._begin_frame(rect)
        if len(self.node_mask) == len(self.scene.arrays.ids):
            self._painted = graph_painter.paint(painter, self.scene, view, rect)
            if view.moving:
                self._moving_budget = graph_painter.moving_budget(self._painted)
        if self._dragging == "link" and self._press_node and self._drag_end is not None:
            start = self.scene.position(self._press_node)
            if start is not None:
                pen = QPen(QColor(colours.GRAPH_SELECTED), 2.0, Qt.PenStyle.DashLine)
                painter.setPen(pen)
                painter.drawLine(self.to_screen(*start), self._drag_end)
        painter.end()
        self.full_frames += 1
        moving = view.moving
        return FullFrame(
            pixmap, self.scale, QPointF(self.offset), self._content, moving, self.scene.arrays
        )

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (
            QEvent.Type.PaletteChange,
            QEvent.Type.FontChange,
            QEvent.Type.StyleChange,
        ):
            self.redraw()  # the theme's colours or the font: the kept frame is stale
        super().changeEvent(event)

    # --- the mouse and the keys ---------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        self._press = self._last = event.position()
        self._press_node = self.node_at(event.position())
        self._dragging = ""

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._press is None or self._last is None:
            return
        point = event.position()
        if not self._dragging:
            moved = point - self._press
            if math.hypot(moved.x(), moved.y()) < DRAG_PIXELS:
                return
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self._dragging = "pan" if not self._press_node else "move" if shift else "link"
        if self._dragging == "pan":
            self.pan(point.x() - self._last.x(), point.y() - self._last.y())
        elif self._dragging == "move" and self._press_node:
            self.scene.move(self._press_node, *self.to_world(point))
        else:
            self._drag_end = point
            self.redraw()
        self._last = point

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._press is None:
            return super().mouseReleaseEvent(event)
        source, dragging = self._press_node, self._dragging
        self._press = self._last = self._drag_end = None
        self._press_node, self._dragging = None, ""
        point = event.position()
        if dragging == "link" and source:
            target = self.node_at(point)
            if target and target != source:
                self.link_dragged.emit(source, target)
            self.redraw()
        elif dragging == "move" and source:
            self.node_moved.emit(source)
        elif not dragging:
            owner = self.more_at(point)
            if owner is not None:
                self.more_activated.emit(owner)
            elif source:
                self.node_clicked.emit(source, event.modifiers())
            else:
                self.background_clicked.emit()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position())
        if node:
            self.node_activated.emit(node)

    def wheelEvent(self, event: QWheelEvent) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom(ZOOM_STEP**steps, event.position())

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        node = self.node_at(QPointF(event.pos()))
        self.context_requested.emit(node or "", event.globalPos())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        step = 60.0
        moves = {
            Qt.Key.Key_Left: (step, 0.0),
            Qt.Key.Key_Right: (-step, 0.0),
            Qt.Key.Key_Up: (0.0, step),
            Qt.Key.Key_Down: (0.0, -step),
        }
        if key in moves:
            self.pan(*moves[key])
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(ZOOM_STEP)
        elif key == Qt.Key.Key_Minus:
            self.zoom(1 / ZOOM_STEP)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.selected:
            self.node_activated.emit(self.selected[0])
        else:
            super().keyPressEvent(event)
