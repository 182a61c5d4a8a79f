"""The strength column's bar, as a small picture the table's own delegate draws.

Drawn by a Python delegate, the bar cost ~200 µs of Python per row and paint (a fifth of a
table paint, each call waiting for the GIL while a query job runs); as a cached picture in
the cell's decoration, Qt draws it with the number beside it and no Python at all.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPixmap

from memgui.ui.theme import colours

BAR_WIDTH = 48  # the bar of the default 90 px column, the number right of it
BAR_HEIGHT = 7
STEPS = 100  # the bar is drawn to the hundredth, as the number is shown

_bars: dict[int, QPixmap] = {}
_palette_key: list[int] = [0]


def strength_color(value: float) -> QColor:
    if value >= 0.6:
        return QColor(colours.STRENGTH_HIGH)
    if value >= 0.3:
        return QColor(colours.STRENGTH_MID)
    return QColor(colours.STRENGTH_LOW)


def strength_bar(value: float) -> QPixmap:
    """The bar for `value` (0–1) on the current palette, drawn once per hundredth."""
    palette = QGuiApplication.palette()
    if palette.cacheKey() != _palette_key[0]:  # light/dark switched: the track colour changed
        _bars.clear()
        _palette_key[0] = palette.cacheKey()
    step = round(max(0.0, min(1.0, value)) * STEPS)
    bar = _bars.get(step)
    if bar is None:
        bar = _bars[step] = _draw(step / STEPS, palette.color(QPalette.ColorRole.Mid))
    return bar


def _draw(value: float, track: QColor) -> QPixmap:
    app = QGuiApplication.instance()
    ratio = app.devicePixelRatio() if isinstance(app, QGuiApplication) else 1.0
    pixmap = QPixmap(round(BAR_WIDTH * ratio), round(BAR_HEIGHT * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(track)
    painter.drawRoundedRect(QRectF(0, 0, BAR_WIDTH, BAR_HEIGHT), 3, 3)
    painter.setBrush(strength_color(value))
    painter.drawRoundedRect(QRectF(0, 0, BAR_WIDTH * value, BAR_HEIGHT), 3, 3)
    painter.end()
    return pixmap
