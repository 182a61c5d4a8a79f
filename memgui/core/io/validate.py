"""Checking a trace record before it is written, and building the row it becomes.

Readers check what they read, but a person may edit a record in the plan (fix a refused one,
change a tag) before committing, so `commit` checks every trace record it writes again with
the core's own rules. A record that fails is refused, naming the field, the rule and the value.
"""

from __future__ import annotations

import math
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.model import (
    SCOPES,
    TYPES,
    check_category,
    check_choice,
    check_content,
    check_strength,
    check_tags,
)

_TIMES = ("created_at", "last_accessed", "expires_at")


def _int_or_none(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidArgument(name, f"must be epoch milliseconds (got {value!r})", value)


def _dict_or_none(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, dict):
        raise InvalidArgument(name, f"must be a JSON object (got {value!r:.80})", value)


def check_trace_fields(fields: dict[str, Any]) -> None:
    """Raise InvalidArgument naming the first field the core would not take."""
    check_content(fields.get("content"))
    check_choice("type", fields.get("type") or "episodic", TYPES)
    check_choice("scope", fields.get("scope") or "user", SCOPES)
    scope_id = fields.get("scope_id")
    if scope_id is not None and not isinstance(scope_id, str):
        raise InvalidArgument("scope_id", f"must be a string (got {scope_id!r})", scope_id)
    trace_id = fields.get("id")
    if trace_id is not None and not isinstance(trace_id, str):
        raise InvalidArgument("id", f"must be a string (got {trace_id!r})", trace_id)
    check_category(fields.get("category"))
    check_tags(fields.get("tags"))
    check_strength(fields.get("strength", 1.0) if fields.get("strength") is not None else 1.0)
    for name in _TIMES:
        _int_or_none(name, fields.get(name))
    count = fields.get("retrieval_count")
    if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
        raise InvalidArgument("retrieval_count", f"must be an integer >= 0 (got {count!r})", count)
    _dict_or_none("metadata", fields.get("metadata"))
    _dict_or_none("emotions", fields.get("emotions"))
    embedding = fields.get("embedding")
    if embedding is not None and (not isinstance(embedding, bytes) or len(embedding) % 4):
        raise InvalidArgument("embedding", "must be float32 little-endian bytes", None)
    stability = fields.get("stability_ms")
    if stability is not None and (
        isinstance(stability, bool)
        or not isinstance(stability, int | float)
        or not math.isfinite(stability)
        or stability <= 0
    ):
        raise InvalidArgument("stability_ms", f"must be a positive number (got {stability!r})")


def trace_snapshot(fields: dict[str, Any], trace_id: str, now: int) -> dict[str, Any]:
    """The snapshot `store.insert_trace` writes for a checked record."""
    metadata = dict(fields.get("metadata") or {})
    stability = fields.get("stability_ms")
    if stability is not None:
        decay = metadata.get("decay")
        metadata["decay"] = dict(decay if isinstance(decay, dict) else {}, stability=stability)
    scope_id = fields.get("scope_id") or ""
    created_at = fields.get("created_at")
    return {
        "id": trace_id,
        "type": fields.get("type") or "episodic",
        "scope": fields.get("scope") or "user",
        "scope_id": scope_id,
        "content": fields["content"],
        "strength": float(fields["strength"]) if fields.get("strength") is not None else 1.0,
        "created_at": created_at if created_at is not None else now,
        "last_accessed": fields.get("last_accessed"),
        "retrieval_count": fields.get("retrieval_count") or 0,
        "tags": list(dict.fromkeys(fields.get("tags") or ())),  # checked already
        "emotions": dict(fields.get("emotions") or {}),
        "metadata": metadata,
        "deleted": bool(fields.get("deleted")),
        "expires_at": fields.get("expires_at"),
        "category": fields.get("category"),
        "version": 1,
        "updated_at": now,
        "embedding_status": 0,
    }
