"""The AgentOS JSON export: one object, byte for byte in the layout AgentOS writes.

Keys in AgentOS's order (`meta, traces, nodes, edges, documents, chunks, images,
conversations, messages`); each row is the raw table row (`SELECT *` column order, JSON
columns left as strings, `brain_id` included); `meta` is `brain_meta` plus `exported_at`;
an `embedding` BLOB is base64 with `include_embeddings`, else its key is left out (as
JavaScript drops an `undefined` value), and a NULL one is `null`; numbers are written as
JavaScript writes them (`1`, not `1.0`); 2-space indent, non-ASCII as it is, no final line
break. Deleted traces are kept with their flag. Rows are streamed to a private temporary
file that is renamed over the destination at the end, so memory stays flat for any size.

A selection limits the traces; the memory-graph node of a trace left out, the edges naming
one, and a chunk's pointer to one are left out too, so the file reads back whole.
"""

from __future__ import annotations

import base64
import functools
import math
import re
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import apsw

from memgui.core.io.exporters.export_common import (
    ExportOptions,
    ExportResult,
    Refusals,
    Selected,
    close_snapshot,
    columns,
    export_clock,
    open_snapshot,
    private_atomic_file,
    refuse_missing,
    select_traces,
    tables,
)
from memgui.core.io.readers.agentos_reader import SECTIONS  # JSON key -> table, AgentOS's order
from memgui.core.progress import Job, Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain

# Row order per table: the order AgentOS's `SELECT * … WHERE brain_id = ?` returns, walking
# the index SQLite picks for it, made explicit so that it never depends on a query plan.
ROW_ORDER = {
    "memory_traces": "scope, rowid",
    "knowledge_nodes": "type, rowid",
    "knowledge_edges": "target_id, rowid",
    "documents": "id",
    "document_chunks": "document_id, chunk_index, rowid",
    "document_images": "id",
    "conversations": "id",
    "messages": "conversation_id, created_at, rowid",
}
CONVERSATION_SECTIONS = frozenset({"conversations", "messages"})
PROGRESS_EVERY = 1000
_UNSAFE = re.compile("[\ud800-\udfff]")  # a lone surrogate: JSON.stringify escapes it


def js_number(value: int | float) -> str:
    """A number as JavaScript's JSON.stringify writes it (NaN and infinities as null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    mantissa, _, exp_text = repr(value).partition("e")
    negative = mantissa.startswith("-")
    whole, _, fraction = mantissa.lstrip("-").partition(".")
    digits = (whole + fraction.rstrip("0")).lstrip("0") or "0"
    # value = 0.digits × 10^point (ECMAScript's n), from the shortest round-trip repr
    leading_zeros = len(whole + fraction) - len((whole + fraction).lstrip("0"))
    point = len(whole) + int(exp_text or 0) - leading_zeros
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        exponent = point - 1
        sign = "+" if exponent >= 0 else "-"
        body = digits[0] + ("." + digits[1:] if k > 1 else "")
        text = f"{body}e{sign}{abs(exponent)}"
    return "-" + text if negative else text


def js_string(value: str) -> str:
    text = encode_basestring(value)  # the C encoder json.dumps(ensure_ascii=False) uses
    if _UNSAFE.search(text):
        text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return text


def js_value(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is str:
        return js_string(value)
    if type(value) is int:
        return str(value)
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return js_string(base64.b64encode(bytes(value)).decode("ascii"))
    return js_string(str(value))


@functools.lru_cache(maxsize=64)
def _key_prefixes(names: tuple[str, ...], indent: str) -> tuple[str, ...]:
    return tuple(f"{indent}  {js_string(name)}: " for name in names)


def row_text(names: list[str], values: tuple[Any, ...], embeddings: bool, indent: str) -> str:
    """One row as JSON.stringify(row, null, 2) writes it at this depth."""
    lines = []
    for prefix, value in zip(_key_prefixes(tuple(names), indent), values, strict=True):
        if value is not None and not embeddings and prefix.endswith('"embedding": '):
            continue  # `undefined` in AgentOS: the key is dropped
        lines.append(prefix + js_value(value))
    if not lines:
        return "{}"
    return "{\n" + ",\n".join(lines) + "\n" + indent + "}"


def _section_query(
    key: str, table: str, names: list[str], selected: Selected
) -> tuple[str, tuple[Any, ...]]:
    """SELECT of one section's rows for this brain (and this selection), in AgentOS's order."""
    cols = ", ".join(f'"{n}"' for n in names)
    out = "(SELECT id FROM temp.export_out)"
    order = ROW_ORDER[table]
    if key == "traces":
        return (
            f"SELECT {cols} FROM {table} WHERE {selected.where} ORDER BY {order}",
            selected.params,
        )
    where = "brain_id = ?"
    if selected.limited:
        if key == "nodes":
            where += f" AND id NOT IN {out}"
        elif key == "edges":
            where += f" AND source_id NOT IN {out} AND target_id NOT IN {out}"
        elif key == "chunks" and "trace_id" in names:
            cols = cols.replace(
                '"trace_id"', f"CASE WHEN trace_id IN {out} THEN NULL ELSE trace_id END"
            )
    return f"SELECT {cols} FROM {table} WHERE {where} ORDER BY {order}", (selected.params[0],)


def _write_meta(conn: apsw.Connection, brain_id: str, exported_at: int, out: BinaryIO) -> None:
    meta: dict[str, str] = {}
    if "brain_meta" in tables(conn):
        for key, value in conn.execute(
            "SELECT key, value FROM brain_meta WHERE brain_id = ? ORDER BY key", (brain_id,)
        ):
            meta[str(key)] = value if isinstance(value, str) else js_value(value)
    meta["exported_at"] = str(exported_at)
    lines = [f"    {js_string(k)}: {js_string(v)}" for k, v in meta.items()]
    out.write(('{\n  "meta": {\n' + ",\n".join(lines) + "\n  }").encode())


def export_json(brain: Brain, dest: str | Path, options: ExportOptions) -> Job[ExportResult]:
    """Write the AgentOS JSON export of `brain` to `dest` (see the module docstring)."""
    dest = Path(dest)
    exported_at = export_clock(brain, options)
    refusals = Refusals()
    conn = open_snapshot(brain.path)
    try:
        present = tables(conn)
        selected = select_traces(conn, brain.brain_id, options.selection)
        refuse_missing(refusals, selected)
        total = (
            conn.execute(
                f"SELECT count(*) FROM memory_traces WHERE {selected.where}", selected.params
            ).get
            if "memory_traces" in present
            else 0
        )
        yield Progress(0, total, f"exporting {total} traces to {dest.name}")
        traces = 0
        with private_atomic_file(dest) as out:
            _write_meta(conn, brain.brain_id, exported_at, out)
            for key, table in SECTIONS:
                out.write(f',\n  "{key}": ['.encode())
                skip = key in CONVERSATION_SECTIONS and not options.include_conversations
                count = 0
                if table in present and not skip:
                    names = columns(conn, table)
                    sql, params = _section_query(key, table, names, selected)
                    embeddings = options.include_embeddings
                    for values in conn.execute(sql, params):
                        text = row_text(names, values, embeddings, "    ")
                        out.write(((",\n    " if count else "\n    ") + text).encode())
                        count += 1
                        if key == "traces" and count % PROGRESS_EVERY == 0:
                            yield Progress(count, total, f"exported {count} of {total} traces")
                out.write(("\n  ]" if count else "]").encode())
                if key == "traces":
                    traces = count
            out.write(b"\n}")
        yield Progress(total, total, f"exported {traces} traces")
    finally:
        close_snapshot(conn)
    return refusals.result(traces)
