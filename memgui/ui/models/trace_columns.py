"""Columns and roles of the trace table, and how each cell shows a `Trace`.

Kept apart from the model so `data()` stays a cache lookup plus one small formatter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from PySide6.QtCore import Qt

from memgui.core.model import Trace, TraceFilter

CONTENT_CHARS = 160  # the table shows the first line, cut here; the editor shows it all


class TraceRole(IntEnum):
    """Named roles of the trace table (Qt.UserRole + 1 onwards)."""

    TRACE_ID = Qt.ItemDataRole.UserRole + 1
    TRACE = Qt.ItemDataRole.UserRole + 2
    STRENGTH = Qt.ItemDataRole.UserRole + 3  # float 0..1, painted as a bar
    SORT_KEY = Qt.ItemDataRole.UserRole + 4


def first_line(text: str, limit: int = CONTENT_CHARS) -> str:
    """The first non-empty line of `text`, cut to `limit` characters with an ellipsis."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    if len(line) > limit:
        return line[: limit - 1] + "…"
    more = "…" if line and text.strip() != line else ""
    return line + more


def format_ms(value: int | None) -> str:
    if value is None:
        return ""
    moment = dt.datetime.fromtimestamp(value / 1000)
    return moment.strftime("%Y-%m-%d %H:%M")


def embedding_label(status: int) -> str:
    """How the table shows `Trace.embedding_status` (1 embedded, 0 pending)."""
    return "embedded" if status == 1 else "pending"


@dataclass(frozen=True)
class TraceColumn:
    header: str
    order: str  # the core's ORDER BY key ("" when the core cannot sort by it)
    display: Callable[[Trace], str]
    sort_key: Callable[[Trace], Any]  # for in-memory sorting of search results
    tooltip: str
    width: int


COLUMNS: tuple[TraceColumn, ...] = (
    TraceColumn(
        "Content",
        "content",
        lambda t: first_line(t.content),
        lambda t: t.content.casefold(),
        "The memory's text (first line)",
        290,
    ),
    TraceColumn("Type", "type", lambda t: t.type, lambda t: t.type, "Memory type", 90),
    TraceColumn(
        "Category",
        "category",
        lambda t: t.category or "",
        lambda t: t.category or "",
        "Agent-memory category (DECISION, PATTERN, …)",
        100,
    ),
    TraceColumn("Scope", "scope", lambda t: t.scope, lambda t: t.scope, "Scope", 100),
    TraceColumn("Scope id", "scope_id", lambda t: t.scope_id, lambda t: t.scope_id, "Scope id", 90),
    TraceColumn(
        "Tags",
        "tags",
        lambda t: ", ".join(t.tags),
        lambda t: ",".join(t.tags),
        "Tags",
        120,
    ),
    TraceColumn(
        "Strength",
        "strength",
        lambda t: f"{t.strength:.2f}",
        lambda t: t.strength,
        "Current strength after decay (0–1)",
        90,
    ),
    TraceColumn(
        "Created",
        "created_at",
        lambda t: format_ms(t.created_at),
        lambda t: t.created_at,
        "When the memory was stored",
        120,
    ),
    TraceColumn(
        "Last accessed",
        "last_accessed",
        lambda t: format_ms(t.last_accessed),
        lambda t: t.last_accessed or 0,
        "When the memory was last recalled",
        120,
    ),
    TraceColumn(
        "Retrievals",
        "retrieval_count",
        lambda t: str(t.retrieval_count),
        lambda t: t.retrieval_count,
        "How many times it was recalled",
        70,
    ),
    TraceColumn(
        "Expires",
        "expires_at",
        lambda t: format_ms(t.expires_at),
        lambda t: t.expires_at or 0,
        "When its TTL ends (empty: never)",
        120,
    ),
    TraceColumn(
        "Version",
        "version",
        lambda t: str(t.version),
        lambda t: t.version,
        "Version (bumped by every write)",
        60,
    ),
    TraceColumn(
        "Embedding",
        "",  # the core cannot order by it; sorted in memory for search results only
        lambda t: embedding_label(t.embedding_status),
        lambda t: t.embedding_status,
        "Whether the memory has a vector for search by meaning (pending: not yet embedded)",
        80,
    ),
    # Last in the model, so a saved column layout of before keeps its columns; the view
    # shows it first (`TITLE_POSITION`).
    TraceColumn(
        "Title",
        "title",
        lambda t: t.label,
        lambda t: t.label.casefold(),
        "The memory's title (a note's, a chat's); in italics, the start of its text when it "
        "has none",
        220,
    ),
)

CONTENT_COLUMN = 0
STRENGTH_COLUMN = 6
NUMERIC_COLUMNS = frozenset({6, 9, 11})
EMBEDDING_COLUMN = 12
TITLE_COLUMN = 13
TITLE_POSITION = 0  # where the view shows the title column unless the person moved it


def matches(trace: Trace, wanted: TraceFilter) -> bool:
    """Does `trace` belong in a list filtered by `wanted`? (Used to place changed rows.)"""
    if wanted.deleted and not trace.deleted:
        return False
    if not wanted.deleted and not wanted.include_deleted and trace.deleted:
        return False
    checks = (
        (wanted.type, trace.type),
        (wanted.scope, trace.scope),
        (wanted.scope_id, trace.scope_id),
        (wanted.category, trace.category),
    )
    if any(value is not None and value != actual for value, actual in checks):
        return False
    return wanted.tag is None or wanted.tag in trace.tags
