"""agent-memory's portable JSONL export, format v1, written from a memgui brain.

A header line, one `memory` record per trace in ascending key order, then one `link` record
per relation ordered by (from, to, kind); fields in the wire order of format v1, compact
JSON, UTF-8, `\\n` after every line. The key is the trace's rowid, local to the file. Times
are unix seconds; `source` is the trace's `metadata.source`, `scope` its scope id (`null`
for none). Two exports of an unchanged brain under the same clock are byte-identical: the
order is fixed and `exported_at` comes from the injectable clock.

agent-memory knows six memory types and no forgotten memories, so a trace is written only
when its `category` is one of DECISION, PATTERN, ERROR, TODO, ARCHITECTURE, CONSTRAINT and
its text is not blank; any other trace the export covers is returned in `refused` with the
field and the reason. A forgotten trace is not written; when the selection named it, it is
refused (`deleted`). Embedding vectors do not travel, as in agent-memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import metadata as package_metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import apsw

from memgui.core.io.exporters.export_common import (
    ExportOptions,
    ExportResult,
    Refusals,
    close_snapshot,
    export_clock,
    open_snapshot,
    private_atomic_file,
    refuse_missing,
    select_traces,
    tables,
    trace_select,
)
from memgui.core.io.exporters.export_json import js_string
from memgui.core.model import CATEGORIES, LINK_KINDS
from memgui.core.progress import Job, Progress
from memgui.core.storage import store
from memgui.core.storage.schema import SCHEMA_KEY

if TYPE_CHECKING:
    from memgui.core.brain import Brain

FORMAT, VERSION = "agent-memory-export", 1
PROGRESS_EVERY = 2000
_BATCH = 1000


def memgui_version() -> str:
    try:
        return package_metadata.version("memgui")
    except package_metadata.PackageNotFoundError:
        return "0"


def dumps_line(record: dict[str, Any]) -> bytes:
    """One compact JSON line; non-ASCII as it is, a lone surrogate escaped."""
    parts = []
    for key, value in record.items():
        if isinstance(value, str):
            text = js_string(value)
        elif isinstance(value, list):
            text = "[" + ",".join(js_string(v) for v in value) + "]"
        else:
            text = json.dumps(value)
        parts.append(f'"{key}":{text}')
    return ("{" + ",".join(parts) + "}\n").encode()


def _seconds(ms: int | None) -> int | None:
    return None if ms is None else int(ms) // 1000


def memory_record(key: int, snap: dict[str, Any]) -> dict[str, Any]:
    source = snap["metadata"].get("source")
    created = _seconds(snap["created_at"])
    accessed = _seconds(snap["last_accessed"])
    return {
        "record": "memory",
        "key": key,
        "type": snap["category"],
        "content": snap["content"],
        "tags": list(snap["tags"]),
        "source": source if isinstance(source, str) else None,
        "scope": snap["scope_id"] or None,
        "created_at": created,
        "last_accessed": created if accessed is None else accessed,
        "access_count": max(0, int(snap["retrieval_count"])),
        "expires_at": _seconds(snap["expires_at"]),
    }


def _why_not(snap: dict[str, Any]) -> tuple[str, str] | None:
    """(field, problem) when a trace cannot be an agent-memory memory, else None."""
    if snap["deleted"]:
        return "deleted", "is forgotten; agent-memory holds no forgotten memories"
    if snap["category"] not in CATEGORIES:
        return "category", (
            f"must be one of {', '.join(CATEGORIES)} to be an agent-memory type "
            f"(got {snap['category']!r})"
        )
    if not isinstance(snap["content"], str) or not snap["content"].strip():
        return "content", "is blank; agent-memory requires text"
    return None


def _header(
    conn: apsw.Connection, brain_id: str, exported_at: int, rows: int, links: int
) -> dict[str, Any]:
    meta: dict[str, str] = {}
    if "brain_meta" in tables(conn):
        meta = {
            str(k): str(v)
            for k, v in conn.execute(
                "SELECT key, value FROM brain_meta WHERE brain_id = ?", (brain_id,)
            )
        }

    def integer(name: str) -> int:
        try:
            return int(meta.get(name, "0"))
        except ValueError:
            return 0

    return {
        "record": "header",
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at // 1000,
        "embedding_model": meta.get("embedding_model", ""),
        "embedding_dim": integer("embedding_dimensions"),
        "schema_version": integer(SCHEMA_KEY),
        "agent_memory_version": f"memgui {memgui_version()}",
        "exported_rows": rows,
        "exported_links": links,
    }


def _classify(
    conn: apsw.Connection, brain_id: str, options: ExportOptions, refusals: Refusals
) -> None:
    """First pass: which traces become memories (into temp.jsonl_keys); refusals noted."""
    selected = select_traces(conn, brain_id, options.selection)
    refuse_missing(refusals, selected)
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS jsonl_keys (k INTEGER PRIMARY KEY, id TEXT)")
    conn.execute("CREATE INDEX IF NOT EXISTS temp.jsonl_keys_id ON jsonl_keys (id)")
    cols = trace_select(conn)
    batch: list[tuple[int, str]] = []
    for row in conn.execute(
        f"SELECT {cols} FROM memory_traces WHERE {selected.where}", selected.params
    ):
        snap = store.row_to_snapshot(row)
        why = _why_not(snap)
        if why is None:
            batch.append((row[0], snap["id"]))
        elif not (why[0] == "deleted" and not selected.limited):
            refusals.add(snap["id"], *why)  # everything: forgotten traces are simply not written
        if len(batch) >= _BATCH:
            _flush_keys(conn, batch)
    _flush_keys(conn, batch)


def _flush_keys(conn: apsw.Connection, batch: list[tuple[int, str]]) -> None:
    conn.executemany("INSERT INTO temp.jsonl_keys (k, id) VALUES (?, ?)", batch)
    batch.clear()


_LINKS_SQL = """
SELECT CASE WHEN l.kind = 'relates_to' AND a.k > b.k THEN b.k ELSE a.k END AS f,
       CASE WHEN l.kind = 'relates_to' AND a.k > b.k THEN a.k ELSE b.k END AS t,
       l.kind, l.created_at
FROM memory_links l
JOIN temp.jsonl_keys a ON a.id = l.from_id
JOIN temp.jsonl_keys b ON b.id = l.to_id
WHERE l.brain_id = ? AND l.kind IN ({kinds}) AND a.k != b.k
ORDER BY f, t, l.kind
""".format(kinds=", ".join(f"'{k}'" for k in LINK_KINDS))


def export_jsonl(
    brain: Brain, dest: str | Path | BinaryIO, options: ExportOptions
) -> Job[ExportResult]:
    """Write the JSONL v1 export to a path (private, atomic) or to a binary stream."""
    exported_at = export_clock(brain, options)
    refusals = Refusals()
    conn = open_snapshot(brain.path)
    try:
        yield Progress(0, None, "choosing the traces to export")
        _classify(conn, brain.brain_id, options, refusals)
        rows = conn.execute("SELECT count(*) FROM temp.jsonl_keys").get
        has_links = "memory_links" in tables(conn)
        links = (
            conn.execute(f"SELECT count(*) FROM ({_LINKS_SQL})", (brain.brain_id,)).get
            if has_links
            else 0
        )
        header = _header(conn, brain.brain_id, exported_at, rows, links)
        if isinstance(dest, str | Path):
            with private_atomic_file(Path(dest)) as out:
                yield from _write(conn, brain.brain_id, header, has_links, out)
        else:
            yield from _write(conn, brain.brain_id, header, has_links, dest)
            dest.flush()
    finally:
        close_snapshot(conn)
    return refusals.result(rows)


def _write(
    conn: apsw.Connection, brain_id: str, header: dict[str, Any], has_links: bool, out: BinaryIO
) -> Iterator[Progress]:
    total = header["exported_rows"]
    out.write(dumps_line(header))
    cols = trace_select(conn)
    sql = (
        f"SELECT {cols} FROM memory_traces "
        "WHERE rowid IN (SELECT k FROM temp.jsonl_keys) ORDER BY rowid"
    )
    for done, row in enumerate(conn.execute(sql), start=1):
        out.write(dumps_line(memory_record(row[0], store.row_to_snapshot(row))))
        if done % PROGRESS_EVERY == 0:
            yield Progress(done, total, f"exported {done} of {total} memories")
    if has_links:
        for from_key, to_key, kind, created_at in conn.execute(_LINKS_SQL, (brain_id,)):
            link = {"record": "link", "from": from_key, "to": to_key, "kind": kind}
            link["created_at"] = _seconds(created_at)
            out.write(dumps_line(link))
    yield Progress(total, total, f"exported {total} memories and {header['exported_links']} links")
