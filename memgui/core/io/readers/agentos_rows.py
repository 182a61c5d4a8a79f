"""AgentOS rows (from a JSON export or a brain file) turned into import records.

Both AgentOS readers share these converters, so a row reads the same whichever file it came
from. A row the core could not take becomes a `refused` record naming the field, the rule and
the value; nothing here raises for bad data.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Callable, Iterable
from typing import Any

from memgui.core.errors import BrainIdRequired, InvalidArgument
from memgui.core.io.readers.json_bounds import check_nesting, load_value
from memgui.core.io.readers.text_utils import INT64, content_hash
from memgui.core.io.records import (
    CHUNK,
    CONVERSATION,
    DOCUMENT,
    EDGE,
    IMAGE,
    MESSAGE,
    NODE,
    REFUSED,
    TRACE,
    ImportRecord,
    RecordKind,
)
from memgui.core.model import (
    SCOPES,
    TYPES,
    check_category,
    check_choice,
    check_content,
    check_strength,
    check_tags,
    now_ms,
    shown,
)

MAX_DIMENSIONS = 8192  # the most floats a sqlite-vec index (vec0) takes in one vector
FLOAT32_MAX = 3.4028234663852886e38


def json_column(value: Any, field_name: str, kind: type, default: Any) -> Any:
    """A JSON text column, parsed. AgentOS writes strings; a real object/array is taken too."""
    if value is None or value == "":
        return default
    if isinstance(value, bytes | bytearray | memoryview):
        value = bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, str):
        value = load_value(field_name, value)
    else:
        check_nesting(field_name, value)
    if not isinstance(value, kind):
        want = "an object" if kind is dict else "an array"
        raise InvalidArgument(field_name, f"must be {want} (got {value!r:.80})", value)
    return value


def epoch_ms(value: Any, field_name: str, default: int | None) -> int | None:
    """Epoch milliseconds; a numeric string is read as its number (column affinity does so)."""
    if value is None:
        return default
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise InvalidArgument(
                field_name, f"must be epoch milliseconds (got {value!r})", value
            ) from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidArgument(field_name, f"must be epoch milliseconds (got {value!r})", value)
    if not -INT64 <= value < INT64:  # SQLite's integers are 64-bit
        raise InvalidArgument(
            field_name, f"must be epoch milliseconds within ±2**63 (got {value!r})", value
        )
    return round(value)


def non_negative_int(value: Any, field_name: str, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < INT64:
        raise InvalidArgument(
            field_name, f"must be an integer between 0 and 2**63 - 1 (got {value!r})", value
        )
    return int(value)


def number(value: Any, field_name: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise InvalidArgument(field_name, f"must be a number (got {value!r})", value)
    return float(value)


def embedding_bytes(value: Any, field_name: str = "embedding") -> bytes | None:
    """float32 little-endian bytes from a BLOB, base64 text (JSON) or a legacy JSON array.

    Empty is no vector. A vector sqlite-vec cannot index (over MAX_DIMENSIONS floats), or a
    number no float32 holds, is refused here: the commit could not write it.
    """
    if value is None or (isinstance(value, str | bytes | list) and not value):
        return None
    if isinstance(value, str) and value.lstrip().startswith("["):
        value = json_column(value, field_name, list, [])
    if isinstance(value, list):
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
            raise InvalidArgument(field_name, "must be an array of numbers", value[:8])
        _check_dimensions(field_name, len(value))
        try:
            return struct.pack(f"<{len(value)}f", *value) or None
        except (OverflowError, struct.error):
            big = next(x for x in value if abs(x) > FLOAT32_MAX)
            raise InvalidArgument(
                field_name, f"holds a number no 32-bit float holds (got {shown(big)})", big
            ) from None
    if isinstance(value, str):
        try:
            value = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidArgument(field_name, "is not valid base64", value[:40]) from None
    if isinstance(value, memoryview | bytearray):
        value = bytes(value)
    if not isinstance(value, bytes) or len(value) % 4:
        size = len(value) if isinstance(value, bytes) else type(value).__name__
        raise InvalidArgument(field_name, f"must be float32 bytes (got {size} bytes)", size)
    _check_dimensions(field_name, len(value) // 4)
    return value or None


def _check_dimensions(field_name: str, count: int) -> None:
    if count > MAX_DIMENSIONS:
        raise InvalidArgument(
            field_name,
            f"must hold at most {MAX_DIMENSIONS:,} floats, as sqlite-vec indexes (got {count:,})",
            count,
        )


def _text(value: Any, field_name: str, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise InvalidArgument(field_name, f"must be a string (got {value!r:.80})", value)
    return value


def own_object(value: Any, field_name: str) -> tuple[dict[str, Any], str]:
    """A JSON object column; anything else (not JSON, an array, null) gives a new `{}`.

    Seed 000: such a record is stored with an object of its own, not refused. The second
    item says what was replaced, for the review ('' when the column was an object).
    """
    if value is None or value == "":
        return {}, ""
    try:
        return json_column(value, field_name, dict, {}), ""
    except InvalidArgument as exc:
        return {}, f"{field_name} {exc.problem}: stored with an object of its own"


def _refusable(kind: RecordKind, source: str, build: Callable[[], dict[str, Any]]) -> ImportRecord:
    record = ImportRecord(source=source, kind=kind)
    try:
        record.fields = build()
    except InvalidArgument as exc:
        record.refuse(exc.field, f"{exc.field} {exc.problem}", exc.value)
    return record


def _require(row: dict[str, Any], name: str) -> Any:
    if row.get(name) is None:
        raise InvalidArgument(name, "is missing", None)
    return row[name]


def trace_record(row: dict[str, Any], source: str) -> ImportRecord:
    """A `memory_traces` row (a memgui brain's extra columns included)."""
    metadata, replaced = own_object(row.get("metadata"), "metadata")

    def build() -> dict[str, Any]:
        if "content" not in row or row["content"] is None:
            raise InvalidArgument("content", "is missing", None)
        content = check_content(row["content"])
        scope_id = metadata.get("scopeId")
        if not isinstance(scope_id, str):
            scope_id = row.get("scope_id") if isinstance(row.get("scope_id"), str) else ""
            if replaced:
                metadata["scopeId"] = scope_id  # the object of its own names the scope id
        metadata["import_hash"] = content_hash(content)  # seed 000 step 1, as every import
        raw_id = row.get("id")
        return {
            "id": None if raw_id is None else _text(raw_id, "id"),
            "content": content,
            "type": check_choice("type", row.get("type") or "episodic", TYPES),
            "scope": check_choice("scope", row.get("scope") or "user", SCOPES),
            "scope_id": scope_id,
            "category": check_category(row.get("category") or None),
            "tags": list(check_tags(json_column(row.get("tags"), "tags", list, []))),
            "metadata": metadata,
            "emotions": json_column(row.get("emotions"), "emotions", dict, {}),
            "strength": check_strength(number(row.get("strength"), "strength", 1.0)),
            "created_at": epoch_ms(row.get("created_at"), "created_at", now_ms()),
            "last_accessed": epoch_ms(row.get("last_accessed"), "last_accessed", None),
            "retrieval_count": non_negative_int(row.get("retrieval_count"), "retrieval_count"),
            "deleted": bool(row.get("deleted") or 0),
            "expires_at": epoch_ms(row.get("expires_at"), "expires_at", None),
            "embedding": embedding_bytes(row.get("embedding")),
        }

    record = _refusable(TRACE, source, build)
    if replaced and record.verdict != REFUSED:
        record.reason = replaced  # a new record's note: the review shows what was replaced
    return record


def node_record(row: dict[str, Any], source: str) -> ImportRecord:
    def build() -> dict[str, Any]:
        return {
            "id": _text(_require(row, "id"), "id"),
            "type": _text(_require(row, "type"), "type"),
            "label": _text(_require(row, "label"), "label"),
            "properties": own_object(row.get("properties"), "properties")[0],
            "confidence": number(row.get("confidence"), "confidence", 1.0),
            "source": json_column(row.get("source"), "source", dict, {}),
            "created_at": epoch_ms(row.get("created_at"), "created_at", now_ms()),
            "embedding": embedding_bytes(row.get("embedding")),
        }

    return _refusable(NODE, source, build)


def _known(value: str | None, field_name: str, known: set[str], what: str) -> None:
    if value is not None and value not in known:
        raise InvalidArgument(
            field_name, f"names {what} {value!r}, which the file does not hold", value
        )


def edge_record(row: dict[str, Any], source: str, node_ids: set[str]) -> ImportRecord:
    def build() -> dict[str, Any]:
        source_id = _text(_require(row, "source_id"), "source_id")
        target_id = _text(_require(row, "target_id"), "target_id")
        _known(source_id, "source_id", node_ids, "node")
        _known(target_id, "target_id", node_ids, "node")
        return {
            "id": _text(_require(row, "id"), "id"),
            "source_id": source_id,
            "target_id": target_id,
            "type": _text(_require(row, "type"), "type"),
            "weight": number(row.get("weight"), "weight", 1.0),
            "bidirectional": bool(row.get("bidirectional") or 0),
            "metadata": own_object(row.get("metadata"), "metadata")[0],
            "created_at": epoch_ms(row.get("created_at"), "created_at", now_ms()),
        }

    return _refusable(EDGE, source, build)


def document_record(row: dict[str, Any], source: str) -> ImportRecord:
    def build() -> dict[str, Any]:
        return {
            "id": _text(_require(row, "id"), "id"),
            "path": _text(_require(row, "path"), "path"),
            "format": _text(_require(row, "format"), "format"),
            "title": _text(row.get("title"), "title", required=False),
            "content_hash": _text(row.get("content_hash") or "", "content_hash"),
            "chunk_count": non_negative_int(row.get("chunk_count"), "chunk_count"),
            "metadata": json_column(row.get("metadata"), "metadata", dict, {}),
            "ingested_at": epoch_ms(row.get("ingested_at"), "ingested_at", now_ms()),
        }

    return _refusable(DOCUMENT, source, build)


def chunk_record(
    row: dict[str, Any], source: str, document_ids: set[str], trace_ids: set[str]
) -> ImportRecord:
    def build() -> dict[str, Any]:
        document_id = _text(_require(row, "document_id"), "document_id")
        _known(document_id, "document_id", document_ids, "document")
        trace_id = _text(row.get("trace_id"), "trace_id", required=False)
        _known(trace_id, "trace_id", trace_ids, "trace")
        return {
            "id": _text(_require(row, "id"), "id"),
            "document_id": document_id,
            "trace_id": trace_id,
            "content": _text(_require(row, "content"), "content"),
            "chunk_index": non_negative_int(row.get("chunk_index"), "chunk_index"),
            "page_number": row.get("page_number"),
            "embedding": embedding_bytes(row.get("embedding")),
        }

    return _refusable(CHUNK, source, build)


def image_record(
    row: dict[str, Any], source: str, document_ids: set[str], chunk_ids: set[str]
) -> ImportRecord:
    def build() -> dict[str, Any]:
        document_id = _text(_require(row, "document_id"), "document_id")
        _known(document_id, "document_id", document_ids, "document")
        chunk_id = _text(row.get("chunk_id"), "chunk_id", required=False)
        _known(chunk_id, "chunk_id", chunk_ids, "chunk")
        data = _require(row, "data")
        if isinstance(data, str):  # JSON carries the bytes as base64
            try:
                data = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                raise InvalidArgument("data", "is not valid base64", data[:40]) from None
        return {
            "id": _text(_require(row, "id"), "id"),
            "document_id": document_id,
            "chunk_id": chunk_id,
            "data": bytes(data),
            "mime_type": _text(_require(row, "mime_type"), "mime_type"),
            "caption": _text(row.get("caption"), "caption", required=False),
            "page_number": row.get("page_number"),
            "embedding": embedding_bytes(row.get("embedding")),
        }

    return _refusable(IMAGE, source, build)


def conversation_record(row: dict[str, Any], source: str) -> ImportRecord:
    def build() -> dict[str, Any]:
        created_at = epoch_ms(row.get("created_at"), "created_at", now_ms())
        return {
            "id": _text(_require(row, "id"), "id"),
            "title": _text(row.get("title"), "title", required=False),
            "created_at": created_at,
            "updated_at": epoch_ms(row.get("updated_at"), "updated_at", created_at),
            "metadata": json_column(row.get("metadata"), "metadata", dict, {}),
        }

    return _refusable(CONVERSATION, source, build)


def message_record(row: dict[str, Any], source: str, conversation_ids: set[str]) -> ImportRecord:
    def build() -> dict[str, Any]:
        conversation_id = _text(_require(row, "conversation_id"), "conversation_id")
        _known(conversation_id, "conversation_id", conversation_ids, "conversation")
        if row.get("content") is None:
            raise InvalidArgument("content", "is missing", None)
        return {
            "id": _text(_require(row, "id"), "id"),
            "conversation_id": conversation_id,
            "role": _text(_require(row, "role"), "role"),
            "content": check_content(row["content"]),
            "created_at": epoch_ms(row.get("created_at"), "created_at", now_ms()),
            "metadata": json_column(row.get("metadata"), "metadata", dict, {}),
        }

    return _refusable(MESSAGE, source, build)


class SourceBrainIdRequired(BrainIdRequired):
    """An import source holds several brains: the import option names one, not --brain-id.

    `--brain-id` names the brain imported into; the source's brain is `--from-brain-id`
    (`ImportOptions.brain_id`), so the message says that.
    """

    def __init__(self, path: str, brain_ids: list[str], given: str | None = None) -> None:
        super().__init__(path, brain_ids, given)
        if given is None:
            listed = ", ".join(brain_ids)
            self.args = (
                f"{path} holds several brains ({listed}); name the one to import with "
                "--from-brain-id",
            )


def choose_brain(path: str, found: Iterable[str], brain_id: str | None) -> str | None:
    """The one brain to read; several without a choice (or a choice not held) is an error."""
    held = sorted(set(found))
    if brain_id is not None:
        if held and brain_id not in held:
            raise SourceBrainIdRequired(path, held, brain_id)
        return brain_id
    if len(held) > 1:
        raise SourceBrainIdRequired(path, held)
    return held[0] if held else None
