"""Reader of agent-memory's JSONL export, format v1 — strictly.

The file is agent-memory's own contract, so any defect means a damaged or hand-edited file
and a half-restored corpus is worse than a clear refusal. The whole file is checked before
any record is given out (in one pass, building the records as it goes); when it has a
defect, nothing of it is imported. Each defect is one `error` record naming its 1-based line,
and one more `error` record says how many memories were left out and why. A file whose first
line is no valid header is not an agent-memory export: its records are of kind `unread`, so
the source as a whole cannot be read (`plan.unreadable`, CLI exit 2); in a file with a valid
header the defects are `line` records (CLI exit 1). A line that cannot be told a memory or a
link (not JSON, not an object, an unknown record tag) makes no count mismatch and no link to
an unknown key on top: what it held cannot be known. A file of a newer format version is one
`refused` record.

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

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memgui.core.io.readers.agentos_reader import source_file
from memgui.core.io.readers.jsonl_checks import (  # noqa: F401 - the format, named here too
    CATEGORY_TYPES,
    FORMAT,
    HEADER_FIELDS,
    LINK_FIELDS,
    MEMORY_FIELDS,
    READS_UP_TO_VERSION,
    _Check,
    _check_line,
    _Defect,
    stability_ms,
)
from memgui.core.io.readers.jsonl_fields import MemoryFields
from memgui.core.io.readers.text_utils import content_hash, unexpected_reason
from memgui.core.io.records import (
    DUPLICATE,
    ERROR,
    LINE,
    SKIPPED,
    TRACE,
    UNREAD,
    ImportRecord,
)
from memgui.core.model import TraceIds, now_ms
from memgui.core.progress import Progress, paused_steps

MAX_LINE_BYTES = 64 * 1024 * 1024  # a long document is still one memory


def _lines(source: Path) -> Iterator[tuple[int, bytes | None]]:
    """Each line and its number; None for a line over MAX_LINE_BYTES, which is never held
    whole (a file of one endless line would take all the memory there is)."""
    with source.open("rb") as handle:
        read_line = functools.partial(handle.readline, MAX_LINE_BYTES + 1)
        for number, line in enumerate(iter(read_line, b""), start=1):
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                for rest in iter(functools.partial(handle.readline, _SKIP_BYTES), b""):
                    if rest.endswith(b"\n"):
                        break
                yield number, None
            else:
                yield number, line


_SKIP_BYTES = 1024 * 1024


@dataclass
class _Built:
    """The records of a file read so far (while it has no defect)."""

    traces: list[ImportRecord] = field(default_factory=list)
    ids: dict[int, str] = field(default_factory=dict)  # key -> the id of its record
    expired: set[int] = field(default_factory=set)
    seen: dict[tuple[Any, str, str], tuple[str, int]] = field(default_factory=dict)
    by_id: dict[str, ImportRecord] = field(default_factory=dict)
    links: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def _read(source: Path, state: _Check, built: _Built) -> Iterator[Progress]:
    """Check every line; build the records of a memory until the first defect."""
    now = now_ms()
    where = f"{source}:"
    new_id = TraceIds()
    line = 0
    for line, raw in _lines(source):
        if line % 5000 == 0:
            total = state.header["exported_rows"] if state.header else None
            yield Progress(state.memories, total, f"reading line {line}")
        try:
            if raw is None:
                state.untagged += 1
                raise _Defect(line, f"longer than {MAX_LINE_BYTES:,} bytes: not read")
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                state.untagged += 1
                raise _Defect(line, f"not valid JSON ({exc})") from None
            _check_line(state, line, obj)
            if state.newer_version is not None:
                break
            tag = obj["record"]
            if tag == "memory":
                state.clean_memories += 1
            if tag == "link":
                built.links.append((line, obj))
            elif tag == "memory" and not state.defects:
                trace_id = new_id()
                _add_memory(built, _trace(where, line, obj, now, trace_id), obj, line, trace_id)
        except _Defect as defect:
            state.defects.append(defect)
        except Exception as exc:  # a line no rule foresaw: a defect like any other
            state.defects.append(_Defect(line, unexpected_reason(exc)))
    if state.newer_version is not None:
        return
    if line == 0:
        state.defects.append(_Defect(1, "the file is empty: the header record is missing"))
    if state.untagged:
        return  # an unreadable line may be a memory or a link: no count or key to hold it to
    for link_line, link in built.links:
        for end in (link["from"], link["to"]):
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


def _add_memory(
    built: _Built, record: ImportRecord, obj: dict[str, Any], line: int, trace_id: str
) -> None:
    """Keep a checked memory's record; a repeat of an earlier one is its duplicate."""
    key = obj["key"]
    # agent-memory's duplicate key, compared as is (no hash to compute).
    twin = (obj.get("source"), obj["type"], obj["content"])
    if record.verdict == SKIPPED:
        built.expired.add(key)
    elif twin in built.seen:
        first_id, first_line = built.seen[twin]
        record.verdict = DUPLICATE
        record.existing_id = first_id
        record.reason = f"same (source, type, content) as the memory on line {first_line}"
        built.ids[key] = first_id
    else:
        built.seen[twin] = (trace_id, line)
        built.ids[key] = trace_id
        built.by_id[trace_id] = record
    built.traces.append(record)


def read_jsonl(path: str | Path, *, options: Any = None) -> Iterator[Progress | ImportRecord]:
    """Read an agent-memory JSONL v1 export (see the module docstring).

    `options` is accepted for a uniform reader signature; the format has none (it is strict).
    """
    source = source_file(path)
    state = _Check()
    built = _Built()
    # Every record built lives on: nothing for the garbage collector to find meanwhile.
    yield from paused_steps(_read(source, state, built))
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
        built = _Built()  # nothing of it is given out: let it go now
        yield from _rejected(source, state)
        return
    total = state.memories
    dropped = _attach_links(source, built.links, built.ids, built.expired, built.by_id)
    yield Progress(0, total, f"read {total} memories")
    yield from built.traces
    yield Progress(
        total,
        total,
        f"read {total} memories ({len(built.expired)} expired, {dropped} links dropped)",
    )


def _rejected(source: Path, state: _Check) -> Iterator[ImportRecord]:
    """Each defect once, then one record for the memories left out: nothing is imported.

    Without a valid header the file is not an agent-memory export at all (`unread` records:
    the source cannot be read); with one, its defects are defective lines (`line`).
    """
    kind = UNREAD if state.header is None else LINE
    for defect in sorted(state.defects, key=lambda d: d.line):
        record = ImportRecord(source=f"{source}:{defect.line}", kind=kind).fail(str(defect))
        record.problem_field = defect.field_name
        record.value = defect.value
        yield record
    left = state.clean_memories
    if left:
        count, first = len(state.defects), min(d.line for d in state.defects)
        memories = "memory" if left == 1 else "memories"
        reason = (
            f"{left} other {memories} not imported: a file with a defect is rejected whole "
            f"({count} defect{'s' if count > 1 else ''}, the first on line {first})"
        )
        yield ImportRecord(source=str(source), kind=UNREAD, verdict=ERROR, reason=reason)


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
        by_id[from_id].add_link(
            {
                "from_id": from_id,
                "to_id": to_id,
                "kind": obj["kind"],
                "created_at": obj["created_at"] * 1000,
                "source": f"{source}:{line}",
            }
        )
    return dropped


def _trace(where: str, line: int, obj: dict[str, Any], now: int, trace_id: str) -> ImportRecord:
    fields = MemoryFields(trace_id, obj, now, content_hash(obj["content"]))
    record = ImportRecord(source=where + str(line), kind=TRACE, fields=fields)
    expires_at = obj.get("expires_at")
    if expires_at is not None and expires_at * 1000 <= now:
        record.verdict = SKIPPED
        record.problem_field = "expires_at"
        record.value = expires_at
        record.reason = "expired before the import (expires_at is in the past)"
    return record
