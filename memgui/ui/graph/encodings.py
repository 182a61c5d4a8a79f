"""How a node looks: its colour by type, scope or category, its size by retrieval count, its
opacity by decayed strength; and the legend that says so."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import numpy as np
from PySide6.QtGui import QColor

from memgui.core.graph_view import NODE, GraphNode
from memgui.core.model import CATEGORIES, INGEST_CATEGORIES, SCOPES, TYPES
from memgui.ui.theme import colours

COLOUR_BY = ("type", "scope", "category")
# Fixed slots for the values every brain has, so a colour means the same in every brain.
_KNOWN = {
    "type": (*TYPES, "concept", "person", "entity"),
    "scope": SCOPES,
    "category": (*CATEGORIES, *INGEST_CATEGORIES),
}
NO_VALUE = "(none)"
GRAPH_NODE = "graph node"  # what a knowledge node's scope or category is, in the legend

MIN_RADIUS, MAX_RADIUS = 6.0, 18.0
MIN_ALPHA = 0.25  # a memory decayed to nothing is faint, never invisible
ALPHA_STEPS = 4  # opacities are drawn in this many steps (one batch each)


def palette() -> list[QColor]:
    return [QColor(c) for c in colours.GRAPH_PALETTE]


def value_of(node: GraphNode, by: str) -> str:
    """The value of `node` that picks its colour under `by`."""
    if by == "type":
        return node.type
    if node.kind == NODE:
        return GRAPH_NODE
    if by == "scope":
        return node.scope or NO_VALUE
    return node.category or NO_VALUE


def slot_of(value: str, by: str) -> int:
    """The palette slot of a value: its place among the known ones, else a hash of it into
    the slots the known ones leave free (the last slot, grey, is for no value)."""
    known = _KNOWN.get(by, ())
    size = len(colours.GRAPH_PALETTE)
    if value in known:
        return known.index(value) % (size - 1)
    if value in (NO_VALUE, GRAPH_NODE):
        return size - 1  # the grey
    free = list(range(len(known), size - 1)) or list(range(size - 1))
    return free[zlib.crc32(value.encode("utf-8", "surrogatepass")) % len(free)]


def radius_of(retrievals: int) -> float:
    """Size by retrieval count: 6 units unread, growing with the log of the count, ≤ 18."""
    return min(MAX_RADIUS, MIN_RADIUS + 3.0 * math.log2(1 + max(0, retrievals)))


def alpha_step(strength: float) -> int:
    """Opacity by decayed strength, in ALPHA_STEPS steps (0 faintest)."""
    clamped = min(1.0, max(0.0, strength))
    return min(ALPHA_STEPS - 1, int(clamped * ALPHA_STEPS))


def radii(retrievals: np.ndarray) -> np.ndarray:
    """`radius_of` of every count at once."""
    sizes: np.ndarray = np.minimum(
        MAX_RADIUS, MIN_RADIUS + 3.0 * np.log2(1 + np.maximum(0, retrievals))
    )
    return sizes


def alpha_steps(strengths: np.ndarray) -> np.ndarray:
    """`alpha_step` of every strength at once."""
    clamped = np.clip(strengths, 0.0, 1.0)
    steps: np.ndarray = np.minimum(ALPHA_STEPS - 1, (clamped * ALPHA_STEPS).astype(np.int64))
    return steps


def alpha_of(step: int) -> float:
    return MIN_ALPHA + (1.0 - MIN_ALPHA) * (step + 1) / ALPHA_STEPS


@dataclass(frozen=True)
class LegendEntry:
    text: str
    colour: QColor


def legend(values: list[str], by: str) -> list[LegendEntry]:
    """One entry per value shown, in a stable order (known values first, as slotted)."""
    known = _KNOWN.get(by, ())
    ordered = sorted(
        set(values), key=lambda v: (v not in known, known.index(v) if v in known else 0, v)
    )
    colours_ = palette()
    return [LegendEntry(value, colours_[slot_of(value, by)]) for value in ordered]


def edge_colour(kind: str, origin: str) -> QColor:
    key = kind if origin == "link" else "graph"
    return QColor(colours.GRAPH_EDGES.get(key, colours.GRAPH_EDGES["graph"]))
