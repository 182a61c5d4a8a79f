"""The fields of a CSV row's trace record, held in slots and built into a dict when read.

As dicts, a plan of a CSV file held ~22 times the file: each row's record kept a dict of
twelve fields, a metadata dict and the text's hash. Here a row keeps its values in slots
(its hash, metadata and defaults built when read; its type, scope and tags shared between
rows), as `chatgpt_fields` does for conversations (see `records.LazyFields`).
"""

from __future__ import annotations

import sys
from typing import Any

from memgui.core.io.readers.text_utils import content_hash
from memgui.core.io.records import LazyFields
from memgui.core.model import SCOPES, TYPES

_CHOICES = {name: name for name in (*TYPES, *SCOPES)}  # one str per name, shared by rows
_NO_TAGS: tuple[str, ...] = ()
_TAG_SETS: dict[tuple[str, ...], tuple[str, ...]] = {}  # rows repeat a few sets of tags
_MOST_TAG_SETS = 4096


def _shared_tags(tags: list[str]) -> tuple[str, ...]:
    if not tags:
        return _NO_TAGS
    key = tuple(map(sys.intern, tags))
    held = _TAG_SETS.get(key)
    if held is None and len(_TAG_SETS) < _MOST_TAG_SETS:
        _TAG_SETS[key] = held = key
    return held or key


class CsvTraceFields(LazyFields):
    """A row's trace: content, id, type, scope, scope_id, category, tags, strength,
    created_at, last_accessed, retrieval_count, deleted and metadata (None where the row
    gives none)."""

    __slots__ = (
        "content",
        "trace_id",
        "type",
        "scope",
        "category",
        "tags",
        "strength",
        "created_at",
        "last_accessed",
        "retrieval_count",
        "deleted",
        "scope_id",
        "names_scope",  # its metadata names the scope id as `scopeId`
        "extra",  # the rest of the metadata cell's object, without import_hash
    )

    def __init__(self, fields: dict[str, Any]) -> None:
        """From the dict `csv_reader.row_fields` built (and checked)."""
        self._own = None
        self.content: str = fields["content"]
        self.trace_id: str | None = fields.get("id")
        self.type: str = _CHOICES[fields["type"]]
        self.scope: str = _CHOICES[fields["scope"]]
        self.category: str | None = fields["category"]
        self.tags = _shared_tags(fields["tags"])
        self.strength: float = fields["strength"]
        self.created_at: int | None = fields.get("created_at")
        self.last_accessed: int | None = fields.get("last_accessed")
        self.retrieval_count: int | None = fields.get("retrieval_count")
        self.deleted: bool = fields["deleted"]
        self.scope_id: str = sys.intern(fields["scope_id"])  # a few, repeated
        metadata = fields["metadata"]
        # The scopeId it names is the scope id (row_fields saw to it): built from that.
        self.names_scope = metadata.get("scopeId") == self.scope_id
        extra = {k: v for k, v in metadata.items() if k != "import_hash"}
        if self.names_scope:
            del extra["scopeId"]
        self.extra: dict[str, Any] | None = extra or None

    @property
    def afresh(self) -> bool:
        return False  # the content built is the row's own string, not a copy of it

    def take_id(self, trace_id: str) -> bool:
        if self._own is not None or self.trace_id is not None:
            return False
        self.trace_id = trace_id  # a `resolved` entry would cost ~250 B a row
        return True

    def _metadata(self) -> dict[str, Any]:
        metadata = dict(self.extra) if self.extra else {}
        if self.names_scope:
            metadata["scopeId"] = self.scope_id
        metadata["import_hash"] = content_hash(self.content)
        return metadata

    def build(self) -> dict[str, Any]:
        if self._own is not None:
            return dict(self._own)
        return {
            "content": self.content,
            "id": self.trace_id,
            "type": self.type,
            "scope": self.scope,
            "category": self.category,
            "tags": list(self.tags),
            "strength": self.strength,
            "created_at": self.created_at,
            "last_accessed": self.last_accessed,
            "retrieval_count": self.retrieval_count,
            "deleted": self.deleted,
            "scope_id": self.scope_id,
            "metadata": self._metadata(),
        }

    GETTERS = {
        "content": lambda f: f.content,
        "id": lambda f: f.trace_id,
        "type": lambda f: f.type,
        "scope": lambda f: f.scope,
        "category": lambda f: f.category,
        "tags": lambda f: list(f.tags),
        "strength": lambda f: f.strength,
        "created_at": lambda f: f.created_at,
        "last_accessed": lambda f: f.last_accessed,
        "retrieval_count": lambda f: f.retrieval_count,
        "deleted": lambda f: f.deleted,
        "scope_id": lambda f: f.scope_id,
        "metadata": lambda f: f._metadata(),
    }
