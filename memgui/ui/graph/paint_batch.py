"""Hand numpy arrays to QPainter in one call each: points as a QPolygonF, segments as one path.

A QPolygonF's storage is written through a pointer (no Python object per point), and a
QPainterPath of many segments is read from the binary form QDataStream gives it (a count,
then per element its type and two doubles, big-endian): 40,000 edges become one path in
~15 ms, where 40,000 `moveTo`/`lineTo` calls took ~150 ms and `drawLines` of a QPolygonF
converted every point (~80 ms).
"""

from __future__ import annotations

import struct

import numpy as np
import shiboken6
from PySide6.QtCore import QByteArray, QDataStream
from PySide6.QtGui import QPainterPath, QPolygonF

_ELEMENT = np.dtype([("kind", ">i4"), ("x", ">f8"), ("y", ">f8")])
_MOVE_TO, _LINE_TO = 0, 1


def polygon(xy: np.ndarray) -> QPolygonF:
    """A QPolygonF of the (n, 2) points `xy`."""
    out = QPolygonF()
    count = len(xy)
    if not count:
        return out
    out.resize(count)
    # data() is the storage's address (the stubs call it a QPointF): written in place.
    memory = shiboken6.VoidPtr(out.data(), count * 16, True)  # type: ignore[call-arg,arg-type]
    np.frombuffer(memory, dtype=np.float64).reshape(count, 2)[:] = xy  # type: ignore[call-overload]
    return out


def segments(start: np.ndarray, end: np.ndarray) -> QPainterPath:
    """One path of the segments start[i] → end[i] (two (n, 2) arrays)."""
    count = 2 * len(start)
    path = QPainterPath()
    if not count:
        return path
    store = QByteArray()
    store.resize(4 + count * _ELEMENT.itemsize + 8)
    view = memoryview(store)  # type: ignore[arg-type]
    struct.pack_into(">i", view, 0, count)
    elements = np.frombuffer(view, dtype=_ELEMENT, count=count, offset=4)
    elements["kind"][0::2] = _MOVE_TO
    elements["kind"][1::2] = _LINE_TO
    elements["x"][0::2], elements["y"][0::2] = start[:, 0], start[:, 1]
    elements["x"][1::2], elements["y"][1::2] = end[:, 0], end[:, 1]
    struct.pack_into(">ii", view, 4 + count * _ELEMENT.itemsize, 0, 0)  # start, fill rule
    stream = QDataStream(store)
    stream >> path  # noqa: B015  (reads into the path)
    del elements, view
    return path
