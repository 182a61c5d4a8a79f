"""Reader of agent-memory's JSONL export, format v1 — strictly.

The file is agent-memory's own contract, so any defect means a damaged or hand-edited file
and a half-restored corpus is worse than a clear refusal. The whole file is checked first;
when it has a defect, each defect is an `error` record naming its 1-based line, and every
memory of the file is an `error` too, so a plan of it imports nothing. A file of a newer
format version is one `refused` record.

A clean file gives one trace record per memory: its agent-memory type as `category`, times
in milliseconds (`last_accessed` refreshed to now, so restored memories start fresh), and
`stability_ms = H / ln 2` (H = 30 days, 180 for pinned categories) so that the core's
strength equals agent-memory's decay score. Links travel on the record of their `from`
memory as `{"from_id", "to_id", "kind", "created_at"}` over the ids this reader gives each
memory. agent-memory's duplicate key is (`metadata.source`, `category`, content);
`metadata.import_hash` is the SHA-256 of the content as every import stores it. A memory
that repeats an earlier one's (source, type, content) in the file is a `duplicate`
whose `existing_id` is that memory's id, and its links move to it. Expired memories are
`skipped` (counted), and links touching them are dropped and counted.
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memgui.core.io.agentos_reader import source_file
from memgui.core.io.records import (
    DUPLICATE,
    ERROR,
    SKIPPED,
    TRACE,
    UNREAD,
    ImportRecord,
)
from memgui.core.io.text_utils import content_hash
from memgui.core.model import CATEGORIES, DAY_MS, LINK_KINDS, PINNED_CATEGORIES
from memgui.core.progress import Progress

FORMAT = "agent-memory-export"
READS_UP_TO_VERSION = 1
HALF_LIFE_MS = 30 * DAY_MS
PINNED_HALF_LIFE_MS = 180 * DAY_MS
# The memgui trace type an agent-memory category reads as.
CATEGORY_TYPES = {
    "DECISION": "semantic",
    "ARCHITECTURE": "semantic",
    "CONSTRAINT": "semantic",
    "PATTERN": "procedural",  # how things are done here
    "ERROR": "episodic",  # something that happened
    "TODO": "prospective",  # something to do later
}
TAGS = ("header", "memory", "link")

# field -> (required, allowed JSON types); the wire order of format v1.
HEADER_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "format": (True, (str,)),
    "version": (True, (int,)),
    "exported_at": (True, (int,)),
    "embedding_model": (True, (str,)),
    "embedding_dim": (True, (int,)),
    "schema_version": (True, (int,)),
    "agent_memory_version": (True, (str,)),
    "exported_rows": (True, (int,)),
    "exported_links": (True, (int,)),
}
MEMORY_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "key": (True, (int,)),
    "type": (True, (str,)),
    "content": (True, (str,)),
    "tags": (True, (list,)),
    "source": (False, (str, type(None))),
    "scope": (False, (str, type(None))),
    "created_at": (True, (int,)),
    "last_accessed": (True, (int,)),
    "access_count": (True, (int,)),
    "expires_at": (False, (int, type(None))),
}
LINK_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "from": (True, (int,)),
    "to": (True, (int,)),
    "kind": (True, (str,)),
    "created_at": (True, (int,)),
}
SHAPES = {"header": HEADER_FIELDS, "memory": MEMORY_FIELDS, "link": LINK_FIELDS}


def stability_ms(category: str) -> int:
    """The e-folding time (ms) whose decay equals agent-memory's half-life decay."""
    half_life = PINNED_HALF_LIFE_MS if category in PINNED_CATEGORIES else HALF_LIFE_MS
    return round(half_life / math.log(2))


def dedup_key(source: str | None, category: str, content: str) -> str:
    """agent-memory's duplicate key (source, type, content), hashed."""
    key = orjson.dumps([source, category, content])
    return hashlib.sha256(key).hexdigest()


class _Defect(Exception):
    def __init__(self, line: int, message: str, field_name: str | None = None, value: Any = None):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.field_name = field_name
        self.value = value


@dataclass
class _Check:
    """What the checking pass learned about the file."""

    defects: list[_Defect] = field(default_factory=list)
    header: dict[str, Any] | None = None
    keys: dict[int, int] = field(default_factory=dict)  # key -> line
    memories: int = 0
    links: int = 0
    newer_version: int | None = None


TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", list: "an array"}
TYPE_NAMES.update({type(None): "null", bool: "a boolean", dict: "an object"})


def _json_type_name(value: Any) -> str:
    return TYPE_NAMES.get(type(value), "an object")


def _check_shape(line: int, obj: dict[str, Any], tag: str) -> None:
    shape = SHAPES[tag]
    for name in obj:
        if name not in shape:
            expected = ", ".join(shape)
            raise _Defect(line, f"unknown field `{name}`, expected one of {expected}", name)
    for name, (required, types) in shape.items():
        if name not in obj:
            if required:
                raise _Defect(line, f"missing field `{name}`", name)
            continue
        value = obj[name]
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            want = " or ".join(TYPE_NAMES[t] for t in types)
            raise _Defect(
                line, f"`{name}` must be {want} (got {_json_type_name(value)})", name, value
            )


def _check_line(state: _Check, line: int, obj: Any) -> None:
    if not isinstance(obj, dict):
        raise _Defect(line, f"not a JSON object (got {_json_type_name(obj)})")
    tag = obj.get("record")
    if tag not in TAGS:
        raise _Defect(
            line, f"unknown record tag {tag!r}, expected one of header, memory, link", "record", tag
        )
    if line == 1 and tag != "header":
        raise _Defect(line, "the first line must be the header record", "record", tag)
    if tag == "header" and line != 1:
        raise _Defect(line, "a second header record", "record", tag)
    # Counted and keyed before the checks, so one defect does not report others after it.
    if tag == "memory":
        state.memories += 1
        key = obj.get("key")
        if isinstance(key, int) and not isinstance(key, bool) and key in state.keys:
            first = state.keys[key]
            raise _Defect(line, f"duplicate key {key} (first on line {first})", "key", key)
        if isinstance(key, int) and not isinstance(key, bool):
            state.keys[key] = line
    elif tag == "link":
        state.links += 1
    if tag == "header" and isinstance(obj.get("version"), int) and obj["version"] > 1:
        state.newer_version = obj["version"]  # read no further: the format is not ours
        return
    _check_shape(line, obj, tag)
    if tag == "header":
        if obj["format"] != FORMAT:
            raise _Defect(line, f"format must be {FORMAT} (got {obj['format']!r})", "format")
        if obj["version"] < 1:
            raise _Defect(line, f"version must be a positive integer (got {obj['version']})")
        state.header = obj
    elif tag == "memory":
        if obj["type"] not in CATEGORIES:
            allowed = ", ".join(CATEGORIES)
            raise _Defect(line, f"unknown type {obj['type']!r}, expected one of {allowed}", "type")
        if not obj["content"].strip():
            raise _Defect(line, "content must not be empty", "content", obj["content"])
        if not all(isinstance(tag, str) for tag in obj["tags"]):
            raise _Defect(line, "tags must be an array of strings", "tags", obj["tags"])
        if obj["access_count"] < 0:
            raise _Defect(line, f"access_count must be >= 0 (got {obj['access_count']})")
    else:
        if obj["kind"] not in LINK_KINDS:
            allowed = ", ".join(LINK_KINDS)
            raise _Defect(line, f"unknown kind {obj['kind']!r}, expected one of {allowed}", "kind")
        if obj["from"] == obj["to"]:
            raise _Defect(line, f"a link from key {obj['from']} to itself", "to", obj["to"])


def _lines(source: Path) -> Iterator[tuple[int, bytes]]:
    with source.open("rb") as handle:
        yield from enumerate(handle, start=1)


def _check_file(source: Path) -> Iterator[Progress | _Check]:
    state = _Check()
    link_ends: list[tuple[int, int, int]] = []  # (line, from, to)
    line = 0
    for line, raw in _lines(source):
        if line % 5000 == 0:
            yield Progress(line, None, f"checking line {line}")
        try:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise _Defect(line, f"not valid JSON ({exc})") from None
            _check_line(state, line, obj)
            if state.newer_version is not None:
                break
            if obj.get("record") == "link":
                link_ends.append((line, obj["from"], obj["to"]))
        except _Defect as defect:
            state.defects.append(defect)
    if state.newer_version is not None:
        yield state
        return
    if line == 0:
        state.defects.append(_Defect(1, "the file is empty: the header record is missing"))
    for link_line, *ends in link_ends:
        for end in ends:
            if end not in state.keys:
                state.defects.append(
                    _Defect(link_line, f"link to key {end}, which no memory has", "key", end)
                )
    if state.header is not None:
        for name, counted in (("exported_rows", state.memories), ("exported_links", state.links)):
            if state.header[name] != counted:
                state.defects.append(
                    _Defect(1, f"{name} is {state.header[name]} but the file holds {counted}", name)
                )
    yield state


def read_jsonl(path: str | Path) -> Iterator[Progress | ImportRecord]:
    """Read an agent-memory JSONL v1 export (see the module docstring)."""
    source = source_file(path)
    state = _Check()
    for event in _check_file(source):
        if isinstance(event, Progress):
            yield event
        else:
            state = event
    if state.newer_version is not None:
        record = ImportRecord(source=f"{source}:1", kind=UNREAD)
        record.refuse(
            "version",
            f"file is format version {state.newer_version} but memgui reads up to version "
            f"{READS_UP_TO_VERSION}; upgrade memgui",
            state.newer_version,
        )
        yield record
        return
    if state.defects:
        yield from _rejected(source, state)
        return
    yield from _records(source, state)


def _rejected(source: Path, state: _Check) -> Iterator[ImportRecord]:
    """Every defect, then every memory as an error: nothing of a damaged file is imported."""
    for defect in sorted(state.defects, key=lambda d: d.line):
        record = ImportRecord(source=f"{source}:{defect.line}", kind=UNREAD).fail(str(defect))
        record.problem_field = defect.field_name
        record.value = defect.value
        yield record
    first = min(d.line for d in state.defects)
    count = len(state.defects)
    reason = (
        f"not imported: the file has {count} defect{'s' if count > 1 else ''} "
        f"(first on line {first}) and is rejected as a whole"
    )
    for key, line in sorted(state.keys.items(), key=lambda item: item[1]):
        record = ImportRecord(source=f"{source}:{line}", kind=TRACE, verdict=ERROR, reason=reason)
        record.value = key
        yield record


def _records(source: Path, state: _Check) -> Iterator[Progress | ImportRecord]:
    now = int(time.time() * 1000)
    total = state.memories
    ids: dict[int, str] = {}  # key -> the id of the record that stands for it
    expired: set[int] = set()
    seen: dict[str, tuple[str, int]] = {}  # dedup hash -> (id, line)
    traces: list[ImportRecord] = []
    by_id: dict[str, ImportRecord] = {}
    links: list[tuple[int, dict[str, Any]]] = []
    for line, raw in _lines(source):
        obj = orjson.loads(raw)
        if obj["record"] == "link":
            links.append((line, obj))
        if obj["record"] != "memory":
            continue
        record = _trace(source, line, obj, now)
        digest = dedup_key(obj.get("source"), obj["type"], obj["content"])
        if record.verdict == SKIPPED:
            expired.add(obj["key"])
        elif digest in seen:
            first_id, first_line = seen[digest]
            record.verdict = DUPLICATE
            record.existing_id = first_id
            record.reason = f"same (source, type, content) as the memory on line {first_line}"
            ids[obj["key"]] = first_id
        else:
            seen[digest] = (record.fields["id"], line)
            ids[obj["key"]] = record.fields["id"]
            by_id[record.fields["id"]] = record
        traces.append(record)
        if len(traces) % 1000 == 0:
            yield Progress(len(traces), total, f"read {len(traces)} of {total} memories")
    dropped = _attach_links(source, links, ids, expired, by_id)
    yield from traces
    yield Progress(
        total, total, f"read {total} memories ({len(expired)} expired, {dropped} links dropped)"
    )


def _attach_links(
    source: Path,
    links: list[tuple[int, dict[str, Any]]],
    ids: dict[int, str],
    expired: set[int],
    by_id: dict[str, ImportRecord],
) -> int:
    """Put each link on its `from` memory's record, over record ids; returns how many dropped."""
    dropped = 0
    kept: set[tuple[str, str, str]] = set()
    for line, obj in links:
        if obj["from"] in expired or obj["to"] in expired:
            dropped += 1  # an end is not imported
            continue
        from_id, to_id = ids[obj["from"]], ids[obj["to"]]
        if obj["kind"] == "relates_to":  # symmetric: stored smaller id first
            from_id, to_id = sorted((from_id, to_id))
        if from_id == to_id or (from_id, to_id, obj["kind"]) in kept:
            dropped += 1  # both ends collapsed into one memory, or it repeats a link
            continue
        kept.add((from_id, to_id, obj["kind"]))
        by_id[from_id].links.append(
            {
                "from_id": from_id,
                "to_id": to_id,
                "kind": obj["kind"],
                "created_at": obj["created_at"] * 1000,
                "source": f"{source}:{line}",
            }
        )
    return dropped


def _trace(source: Path, line: int, obj: dict[str, Any], now: int) -> ImportRecord:
    category = obj["type"]
    metadata: dict[str, Any] = {"import_hash": content_hash(obj["content"])}
    if obj.get("source") is not None:
        metadata["source"] = obj["source"]  # with `category` and content: the duplicate key
    if obj.get("scope"):
        metadata["scopeId"] = obj["scope"]
    expires_at = obj.get("expires_at")
    record = ImportRecord(
        source=f"{source}:{line}",
        kind=TRACE,
        fields={
            "id": f"mt_{uuid.uuid4()}",
            "content": obj["content"],
            "type": CATEGORY_TYPES[category],
            "scope": "user",
            "scope_id": obj.get("scope") or "",
            "category": category,
            "tags": list(obj["tags"]),
            "metadata": metadata,
            "emotions": {},
            "strength": 1.0,
            "created_at": obj["created_at"] * 1000,
            "last_accessed": now,
            "retrieval_count": obj["access_count"],
            "deleted": False,
            "expires_at": None if expires_at is None else expires_at * 1000,
            "embedding": None,
            "stability_ms": stability_ms(category),
        },
    )
    if expires_at is not None and expires_at * 1000 <= now:
        record.verdict = SKIPPED
        record.problem_field = "expires_at"
        record.value = expires_at
        record.reason = "expired before the import (expires_at is in the past)"
    return record
