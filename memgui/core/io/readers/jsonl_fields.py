"""A checked agent-memory JSONL memory as a trace record's fields, kept compact.

`MemoryFields` holds what the line said (checked by `jsonl_checks`) and builds the trace's
fields when read (see `records.LazyFields`): a 100k-record plan holds 100k small objects
instead of 100k dicts of 17 values. While no field is assigned (`checked`), every value it
gives is one the core takes, so the commit writes its row without checking it again
(`io.writing.trace_rows`); a field assigned turns it into a dict, checked as any other.
"""

from __future__ import annotations

from typing import Any

from memgui.core.io.readers.jsonl_checks import CATEGORY_TYPES, stability_ms
from memgui.core.io.records import LazyFields

# Per category: the trace type and the stability, computed once.
BY_CATEGORY = {name: (kind, stability_ms(name)) for name, kind in CATEGORY_TYPES.items()}


class MemoryFields(LazyFields):
    """The fields `jsonl_reader` gives a memory: id, content, type, scope, scope_id,
    category, tags, metadata (import_hash, source, scopeId), emotions, strength,
    created_at, last_accessed, retrieval_count, deleted, expires_at, embedding and
    stability_ms (the line's times in milliseconds)."""

    __slots__ = (
        "trace_id",
        "content",
        "category",
        "tags",
        "source",
        "scope_id",
        "created_at",
        "last_accessed",
        "retrieval_count",
        "expires_at",
        "import_hash",
    )

    def __init__(
        self,
        trace_id: str,
        obj: dict[str, Any],
        now: int,
        import_hash: str,
    ) -> None:
        """From a memory line `jsonl_checks` found valid."""
        self._own = None
        self.trace_id = trace_id
        self.content: str = obj["content"]
        self.category: str = obj["type"]
        self.tags: list[str] = obj["tags"]  # never handed out: each read gets a copy
        self.source: str | None = obj.get("source")
        self.scope_id: str = obj.get("scope") or ""
        self.created_at: int = obj["created_at"] * 1000
        self.last_accessed = now
        self.retrieval_count: int = obj["access_count"]
        expires_at = obj.get("expires_at")
        self.expires_at: int | None = None if expires_at is None else expires_at * 1000
        self.import_hash = import_hash

    @property
    def afresh(self) -> bool:
        return False  # the content read is the plan's own string, not a copy of it

    @property
    def checked(self) -> bool:
        """True while no field was assigned: every value is the checked line's."""
        return self._own is None

    def metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {"import_hash": self.import_hash}
        if self.source is not None:
            metadata["source"] = self.source  # with `category` and content: the duplicate key
        if self.scope_id:
            metadata["scopeId"] = self.scope_id
        return metadata

    def build(self) -> dict[str, Any]:
        if self._own is not None:
            return dict(self._own)
        trace_type, stability = BY_CATEGORY[self.category]
        return {
            "id": self.trace_id,
            "content": self.content,
            "type": trace_type,
            "scope": "user",
            "scope_id": self.scope_id,
            "category": self.category,
            "tags": list(self.tags),
            "metadata": self.metadata(),
            "emotions": {},
            "strength": 1.0,
            "created_at": self.created_at,
            "last_accessed": self.last_accessed,
            "retrieval_count": self.retrieval_count,
            "deleted": False,
            "expires_at": self.expires_at,
            "embedding": None,
            "stability_ms": stability,
        }

    GETTERS = {
        "id": lambda f: f.trace_id,
        "content": lambda f: f.content,
        "type": lambda f: BY_CATEGORY[f.category][0],
        "scope": lambda f: "user",
        "scope_id": lambda f: f.scope_id,
        "category": lambda f: f.category,
        "tags": lambda f: list(f.tags),
        "metadata": lambda f: f.metadata(),
        "emotions": lambda f: {},
        "strength": lambda f: 1.0,
        "created_at": lambda f: f.created_at,
        "last_accessed": lambda f: f.last_accessed,
        "retrieval_count": lambda f: f.retrieval_count,
        "deleted": lambda f: False,
        "expires_at": lambda f: f.expires_at,
        "embedding": lambda f: None,
        "stability_ms": lambda f: BY_CATEGORY[f.category][1],
    }
