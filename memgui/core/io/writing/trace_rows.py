"""The row a new trace of an import becomes, built once, as the INSERT's parameters.

A record is checked and its row built in one place: `record_row` gives the INSERT
parameters after the rowid (`store.row_values`' tuple) with the tags and title memgui's
full-text indexes take. A JSONL memory no one edited since the reader checked it
(`MemoryFields.checked`) is not checked again and its row is built straight from what the
reader kept, byte for byte what the snapshot would have made (tests/core/io/
test_import_trace_rows.py compares them); any other record is checked (`check_trace_fields`)
and built through its snapshot, which its wikilinks also need.
"""

from __future__ import annotations

from typing import Any

import orjson

from memgui.core.io.planning.validate import fresh_text
from memgui.core.io.readers.jsonl_fields import BY_CATEGORY, MemoryFields
from memgui.core.storage import store

Row = tuple[Any, ...]
Texts = tuple[list[str], str | None]  # tags, title


def title_of(metadata: Any) -> str | None:
    """The title memgui_fts indexes: `metadata.title` when it is text (`schema.TITLE_SQL`)."""
    title = metadata.get("title") if isinstance(metadata, dict) else None
    return title if isinstance(title, str) else None


def checked_row(fields: MemoryFields, brain_id: str, trace_id: str, now: int) -> tuple[Row, Texts]:
    """The row of a JSONL memory as the reader checked it: what `trace_snapshot` and
    `store.row_values` make of its fields, without building either."""
    trace_type, stability = BY_CATEGORY[fields.category]
    metadata = fields.metadata()
    metadata["decay"] = {"stability": stability}  # explicit: a pinned category keeps it
    metadata["content_hash"] = fields.import_hash  # the SHA-256 of the same text
    tags = list(dict.fromkeys(fields.tags)) if fields.tags else []
    # orjson writes these as `dumps` would: text read by orjson (no lone surrogate), ints.
    row = (
        brain_id,
        trace_id,
        trace_type,
        "user",
        fields.scope_id,
        fresh_text(fields.content),
        None,  # embedding
        1.0,
        fields.created_at,
        fields.last_accessed,
        fields.retrieval_count,
        orjson.dumps(tags).decode(),
        "{}",
        orjson.dumps(metadata).decode(),
        0,  # deleted
        fields.expires_at,
        fields.category,
        1,  # version
        now,
        0,  # embedding_status
    )
    return row, (tags, None)


def snapshot_row(brain_id: str, snap: dict[str, Any], embedding: bytes | None) -> tuple[Row, Texts]:
    """The row of a checked snapshot (its metadata prepared for AgentOS, in `snap` too)."""
    row = store.row_values(None, brain_id, snap, embedding)[1:]
    return row, (snap["tags"], title_of(snap["metadata"]))
