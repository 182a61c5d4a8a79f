"""The canvas's kept frames: the last one drawn in full, and one being drawn in slices.

A pan or zoom shows the last full frame moved and scaled (a blit, whatever the number of
nodes) until the gesture settles. A layout's settled frame (up to 12,000 edges: ~100 ms at
once on a loaded machine) is drawn into its pixmap a slice of edges at a time, between
other events, while the layout's last frame stays on screen; it replaces it when complete.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QBrush, QFont, QPainter, QPixmap

from memgui.ui.graph.graph_painter import Painted
from memgui.ui.graph.graph_scene import NodeArrays


@dataclass
class FullFrame:
    """The last frame drawn in full, kept to be moved and scaled during a gesture."""

    pixmap: QPixmap
    scale: float
    offset: QPointF
    content: int  # the canvas's content count it was drawn at
    moving: bool  # a layout's frame (edges to a time budget): drawn again once it settles
    arrays: NodeArrays  # the scene's nodes it shows (a new object for every rebuild)

    def to_frame(self, point: QPointF, scale: float, offset: QPointF) -> QPointF:
        """Where `point` (on the canvas now, at `scale` and `offset`) was in this frame."""
        k = scale / self.scale
        return QPointF(
            (point.x() - offset.x()) / k + self.offset.x(),
            (point.y() - offset.y()) / k + self.offset.y(),
        )

    def draw_moved(
        self, painter: QPainter, rect: QRectF, scale: float, offset: QPointF, base: QBrush
    ) -> None:
        """Draw this frame as the view at `scale` and `offset` sees it."""
        painter.fillRect(rect, base)
        k = scale / self.scale
        painter.save()
        painter.translate(offset.x() - self.offset.x() * k, offset.y() - self.offset.y() * k)
        painter.scale(k, k)
        painter.drawPixmap(0, 0, self.pixmap)
        painter.restore()


@dataclass
class SlicedFrame:
    """A full frame being drawn into its pixmap, a slice of edges per step."""

    pixmap: QPixmap
    painter: QPainter  # open on `pixmap` during a step only (none is left open between)
    font: QFont
    steps: Generator[None, None, Painted]
    scale: float
    offset: QPointF
    content: int
    arrays: NodeArrays

    def step(self) -> Painted | None:
        """Draw the next slice; what was drawn once the frame is complete, else None."""
        self.painter.begin(self.pixmap)
        self.painter.setFont(self.font)
        try:
            next(self.steps)
        except StopIteration as done:
            painted: Painted = done.value
            return painted
        finally:
            self.painter.end()
        return None

    def abandon(self) -> None:
        self.steps.close()

    def full(self) -> FullFrame:
        return FullFrame(self.pixmap, self.scale, self.offset, self.content, False, self.arrays)
