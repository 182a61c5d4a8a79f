"""The common shape every format reader produces and the import planner consumes.

A reader is a generator: it yields `Progress` events and `ImportRecord`s, one per thing it
read (a trace, a knowledge node or edge, a conversation, a message, …) or could not read.
Readers never touch a brain; `plan.py` classifies records against one and `commit` writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Verdicts a record can have in a plan.
NEW, DUPLICATE, UPDATE, REFUSED, ERROR, SKIPPED = (
    "new",
    "duplicate",
    "update",
    "refused",
    "error",
    "skipped",
)
VERDICTS = (NEW, DUPLICATE, UPDATE, REFUSED, ERROR)

# Kinds of record.
TRACE, NODE, EDGE, CONVERSATION, MESSAGE, DOCUMENT, CHUNK, IMAGE, UNREAD = (
    "trace",
    "node",
    "edge",
    "conversation",
    "message",
    "document",
    "chunk",
    "image",
    "unread",  # a file the reader saw and did not read (an image, another extension)
)


@dataclass(slots=True)  # a big plan holds ~500k of them: no per-record attribute dict
class ImportRecord:
    """One thing read from a source.

    `fields` for a trace uses the core's names: id (optional), content, type, scope,
    scope_id, category, tags (list), metadata (dict), emotions (dict), strength (S0),
    created_at / last_accessed (epoch ms), retrieval_count, deleted (bool), expires_at,
    embedding (float32 little-endian bytes or None), stability_ms. Other kinds carry their
    table's columns (JSON columns as dicts). `links` holds wikilink targets / relations.
    """

    source: str  # "path:line", "path#conversation-id", "path" — where a person finds it
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)
    verdict: str = NEW
    reason: str = ""
    problem_field: str | None = None
    value: Any = None
    existing_id: str | None = None  # for duplicate / update: the trace already there
    links: list[dict[str, Any]] = field(default_factory=list)
    accepted: bool = True

    def refuse(self, field_name: str, reason: str, value: Any = None) -> ImportRecord:
        self.verdict = REFUSED
        self.problem_field = field_name
        self.reason = reason
        self.value = value
        return self

    def fail(self, reason: str) -> ImportRecord:
        self.verdict = ERROR
        self.reason = reason
        return self
