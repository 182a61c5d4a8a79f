"""Checking a trace record before it is written, and building the row it becomes.

Readers check what they read, but a person may edit a record in the plan (fix a refused one,
change a tag) before committing, so `commit` checks every trace record it writes again with
the core's own rules. A record that fails is refused, naming the field, the rule and the value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from memgui.core.decay import pinned_explicitly
from memgui.core.errors import InvalidArgument
from memgui.core.model import (
    CATEGORIES,
    INGEST_CATEGORIES,
    PINNED_CATEGORIES,
    SCOPES,
    TYPES,
    check_category,
    check_choice,
    check_content,
    check_strength,
    check_tags,
)

_TIMES = ("created_at", "last_accessed", "expires_at")
_TYPES, _SCOPES = frozenset(TYPES), frozenset(SCOPES)
_CATEGORIES = frozenset(CATEGORIES + INGEST_CATEGORIES)
_NUMBERS = (int, float)
_INFINITY = math.inf
_BIG_INT = 2**63


def _int_or_none(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidArgument(name, f"must be epoch milliseconds (got {value!r})", value)
    if value is not None and not -_BIG_INT <= value < _BIG_INT:  # SQLite's are 64-bit
        raise InvalidArgument(
            name, f"must be epoch milliseconds within ±2**63 (got {value!r})", value
        )


def _dict_or_none(name: str, value: Any) -> None:
    if value is not None and not isinstance(value, dict):
        raise InvalidArgument(name, f"must be a JSON object (got {value!r:.80})", value)


def check_trace_fields(fields: Mapping[str, Any]) -> None:
    """Raise InvalidArgument naming the first field the core would not take."""
    if not _plainly_valid(fields):
        _check_each(fields)


# Fields that are either absent/None or of exactly this built-in type.
_NONE_OR_EXACTLY = (
    ("scope_id", str),
    ("id", str),
    ("created_at", int),
    ("last_accessed", int),
    ("expires_at", int),
    ("metadata", dict),
    ("emotions", dict),
)


def _plainly_valid(fields: Mapping[str, Any]) -> bool:
    """True when every field is plainly what the core takes: the common case, one look each.

    Exact built-in types only (no bool for a number, no subclass): anything else, valid or
    not, goes to `_check_each`, which names the first problem. Never true for a record
    `_check_each` would refuse.
    """
    get = fields.get
    content = get("content")
    if type(content) is not str or not content or content.isspace():  # no copy, unlike strip
        return False
    value: Any = get("type")
    if value and (type(value) is not str or value not in _TYPES):
        return False
    value = get("scope")
    if value and (type(value) is not str or value not in _SCOPES):
        return False
    for name, kind in _NONE_OR_EXACTLY:
        value = get(name)
        if value is not None and type(value) is not kind:
            return False
        if type(value) is int and not -_BIG_INT <= value < _BIG_INT:  # kind is int
            return False
    value = get("category")
    if value is not None and (type(value) is not str or value not in _CATEGORIES):
        return False
    tags = get("tags")
    if tags:
        if type(tags) is not list and type(tags) is not tuple:
            return False
        for tag in tags:
            if type(tag) is not str or not tag or tag.isspace():
                return False
    elif tags is not None and type(tags) is not list and type(tags) is not tuple:
        return False
    value = get("strength")
    if value is not None and (type(value) not in _NUMBERS or not 0.0 <= value <= 1.0):
        return False  # NaN fails the comparison too
    value = get("retrieval_count")
    if value is not None and (type(value) is not int or not 0 <= value < _BIG_INT):
        return False
    value = get("embedding")
    if value is not None and (type(value) is not bytes or len(value) % 4):
        return False
    value = get("stability_ms")
    if value is None:
        return True
    if type(value) is float:
        return 0 < value < _INFINITY  # NaN fails as well
    return type(value) is int and 0 < value < _BIG_INT  # isfinite() overflows past it


def _check_each(fields: Mapping[str, Any]) -> None:
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
    if count is not None and (
        isinstance(count, bool) or not isinstance(count, int) or not 0 <= count < _BIG_INT
    ):
        raise InvalidArgument(
            "retrieval_count", f"must be an integer between 0 and 2**63 - 1 (got {count!r})", count
        )
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


def fresh_text(value: Any) -> Any:
    """An equal string that is not the record's own, when it is not ASCII.

    Binding a str to SQLite (or serialising it with orjson) caches its UTF-8 form on the
    object for as long as it lives: written from the plan's own strings, every non-ASCII
    text the reviewed plan holds would be held twice more after the commit. A copy takes
    that cache and is freed with the rows.
    """
    if type(value) is not str or value.isascii():
        return value
    return value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def trace_snapshot(
    fields: dict[str, Any], trace_id: str, now: int, afresh: bool = False
) -> dict[str, Any]:
    """The snapshot `store.insert_trace` writes for a checked record.

    The record's own metadata and emotions dicts are shared, not copied: the store copies
    the metadata before adding its keys, and both are only serialised after that.
    `afresh`: the fields were built for this write (lazy fields), so the text is no copy
    of the plan's.
    """
    get = fields.get
    metadata = get("metadata") or {}
    stability = get("stability_ms")
    if stability is not None:
        decay = metadata.get("decay")
        decay = dict(decay if isinstance(decay, dict) else {}, stability=stability)
        metadata = dict(metadata, decay=decay)
    category = get("category")
    if category in PINNED_CATEGORIES:  # its slower decay written out, as an add does
        metadata = pinned_explicitly(metadata, category)
    strength = get("strength")
    created_at = get("created_at")
    tags = get("tags")
    return {
        "id": trace_id,
        "type": get("type") or "episodic",
        "scope": get("scope") or "user",
        "scope_id": get("scope_id") or "",
        "content": fields["content"] if afresh else fresh_text(fields["content"]),
        "strength": 1.0 if strength is None else float(strength),
        "created_at": now if created_at is None else created_at,
        "last_accessed": get("last_accessed"),
        "retrieval_count": get("retrieval_count") or 0,
        "tags": list(dict.fromkeys(tags)) if tags else [],  # checked already
        "emotions": get("emotions") or {},
        "metadata": metadata,
        "deleted": bool(get("deleted")),
        "expires_at": get("expires_at"),
        "category": category,
        "version": 1,
        "updated_at": now,
        "embedding_status": 0,
    }
