"""The SQL of the knowledge graph in a PostgreSQL brain: AgentOS's `knowledge_nodes` and
`knowledge_edges` (its Postgres DDL: the SQLite one with INTEGER as BIGINT, BLOB as BYTEA),
each write journaled as on a file (`storage/journal_rows.py`: ops `node` and `edge`, the row
without its BLOBs in `before` / `after`), so a revert puts the graph back as it was.

The rules (what a merge moves, what a purge takes along) are in `core/`; nothing here checks
arguments or opens a transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memgui.core.errors import Conflict
from memgui.core.model import JournalEntry
from memgui.core.storage.journal_rows import TABLES, columns
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres_journal import journal
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[Any, ...]]

GRAPH_OPS = frozenset({"node", "edge"})
# `properties.trace_id` of a node when its properties are a JSON object (AgentOS writes
# TEXT, which another program may have filled with anything).
NODE_TRACE_ID = "(CASE WHEN properties IS JSON OBJECT THEN properties::jsonb ->> 'trace_id' END)"


def _journaled(op: str) -> list[str]:
    blobs = TABLES[op][3]
    return [c for c in columns(op) if c not in blobs]


def _as_journal(op: str, names: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    json_cols = TABLES[op][2]
    return {c: _json(v) if c in json_cols else v for c, v in zip(names, values, strict=True)}


def _json(value: Any) -> Any:
    import json

    try:
        return json.loads(value)
    except (TypeError, ValueError):  # not JSON (written by another program): kept as is
        return value


def insert_row(conn: Conn, batch: WriteBatch, brain_id: str, op: str, row: dict[str, Any]) -> bool:
    """One node or edge, journaled as stored (a REAL column, as AgentOS makes it, rounds the
    weight: the journal holds what a later read finds); False when its id was there."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in columns(op) if c in row]
    values = [dumps(row[c]) if c in json_cols else row[c] for c in names]
    stored = _journaled(op)
    got = conn.execute(
        f"INSERT INTO {table} (brain_id, {', '.join(names)}) "
        f"VALUES (%s, {', '.join(['%s'] * len(names))}) ON CONFLICT DO NOTHING "
        f"RETURNING {', '.join(stored)}",
        (brain_id, *values),
    ).fetchone()
    if got is None:
        return False
    journal(conn, batch, brain_id, op, row["id"], None, _as_journal(op, stored, got))
    return True


def update_row(
    conn: Conn,
    batch: WriteBatch,
    brain_id: str,
    op: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Set the columns `after` names and journal the change (`before`: their old values)."""
    table, _ordered, json_cols, _blobs = TABLES[op]
    names = [c for c in after if c != "id"]
    values = [dumps(after[c]) if c in json_cols else after[c] for c in names]
    conn.execute(
        f"UPDATE {table} SET {', '.join(f'{c} = %s' for c in names)} "
        "WHERE brain_id = %s AND id = %s",
        (*values, brain_id, after["id"]),
    )
    journal(conn, batch, brain_id, op, after["id"], before, after)


def delete_rows(
    conn: Conn, batch: WriteBatch, brain_id: str, op: str, where: str, params: Sequence[Any]
) -> int:
    """Delete the rows of `op`'s table that `where` (with `%s` for `params`) picks, each
    journaled as removed so a revert puts it back; how many went."""
    table = TABLES[op][0]
    stored = _journaled(op)
    found = conn.execute(
        f"DELETE FROM {table} WHERE brain_id = %s AND ({where}) RETURNING {', '.join(stored)}",
        (brain_id, *params),
    ).fetchall()
    for values in sorted(found, key=lambda r: str(r[0])):
        row = _as_journal(op, stored, values)
        journal(conn, batch, brain_id, op, row["id"], row, None)
    return len(found)


def let_go_of_trace(conn: Conn, batch: WriteBatch, brain_id: str, trace_id: str) -> None:
    """A trace's knowledge-graph copy goes with it, as on a file: every edge naming the
    trace, then AgentOS's memory_graph node whose id is the trace's (a revert puts the node
    back before its edges)."""
    delete_rows(conn, batch, brain_id, "edge", "source_id = %s OR target_id = %s", (trace_id,) * 2)
    delete_rows(conn, batch, brain_id, "node", "id = %s", (trace_id,))


def node_exists(conn: Conn, brain_id: str, node_id: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM knowledge_nodes WHERE brain_id = %s AND id = %s", (brain_id, node_id)
    ).fetchone()
    return row is not None


def nodes_naming(conn: Conn, brain_id: str, trace_ids: Sequence[str]) -> list[str]:
    """The nodes whose `properties.trace_id` names one of `trace_ids` (an expression index
    answers it)."""
    rows = conn.execute(
        f"SELECT id FROM knowledge_nodes WHERE brain_id = %s AND {NODE_TRACE_ID} = ANY(%s) "
        "ORDER BY id",
        (brain_id, list(trace_ids)),
    ).fetchall()
    return [str(r[0]) for r in rows]


def node_properties(conn: Conn, brain_id: str, node_id: str) -> str | None:
    row = conn.execute(
        "SELECT properties FROM knowledge_nodes WHERE brain_id = %s AND id = %s",
        (brain_id, node_id),
    ).fetchone()
    return str(row[0]) if row is not None else None


def edges_touching(
    conn: Conn, brain_id: str, node_ids: Sequence[str]
) -> list[tuple[str, str, str, str]]:
    """(id, source_id, target_id, type) of the edges with an end in `node_ids`, oldest first."""
    ids = list(node_ids)
    return conn.execute(
        "SELECT id, source_id, target_id, type FROM knowledge_edges WHERE brain_id = %s AND "
        "(source_id = ANY(%s) OR target_id = ANY(%s)) ORDER BY created_at, id",
        (brain_id, ids, ids),
    ).fetchall()


def has_twin(conn: Conn, brain_id: str, source: str, target: str, kind: str, edge_id: str) -> bool:
    """Another edge of the same ends and type."""
    row = conn.execute(
        "SELECT 1 FROM knowledge_edges WHERE brain_id = %s AND source_id = %s AND "
        "target_id = %s AND type = %s AND id != %s LIMIT 1",
        (brain_id, source, target, kind, edge_id),
    ).fetchone()
    return row is not None


def edges_of(conn: Conn, brain_id: str, node_id: str) -> list[tuple[Any, ...]]:
    """(other end, edge type, its label, its type, its properties.trace_id) of each edge at
    `node_id`, oldest first: the two indexes on the edge's ends answer it."""
    return conn.execute(
        "SELECT e.other, e.type, n.label, n.type, "
        "CASE WHEN n.properties IS JSON OBJECT THEN n.properties::jsonb ->> 'trace_id' END "
        "FROM (SELECT CASE WHEN source_id = %(n)s THEN target_id ELSE source_id END AS other, "
        "type, created_at, id FROM knowledge_edges "
        "WHERE brain_id = %(b)s AND (source_id = %(n)s OR target_id = %(n)s)) e "
        "LEFT JOIN knowledge_nodes n ON n.brain_id = %(b)s AND n.id = e.other "
        "ORDER BY e.created_at, e.id",
        {"n": node_id, "b": brain_id},
    ).fetchall()


def page(conn: Conn, brain_id: str, op: str, limit: int, offset: int) -> list[dict[str, Any]]:
    """A page of nodes or edges, oldest first, as `core/graph.py` lists them on a file."""
    wanted = (
        ("id", "type", "label", "properties", "confidence", "created_at")
        if op == "node"
        else ("id", "source_id", "target_id", "type", "weight", "created_at")
    )
    rows = conn.execute(
        f"SELECT {', '.join(wanted)} FROM {TABLES[op][0]} WHERE brain_id = %s "
        "ORDER BY created_at, id LIMIT %s OFFSET %s",
        (brain_id, limit, offset),
    ).fetchall()
    return [dict(zip(wanted, r, strict=True)) for r in rows]


def degrees(conn: Conn, brain_id: str, node_ids: Sequence[str]) -> dict[str, int]:
    """How many edges each node has (both directions), by the two end indexes."""
    ids = list(node_ids)
    rows = conn.execute(
        "SELECT n, count(*) FROM (SELECT source_id AS n FROM knowledge_edges "
        "WHERE brain_id = %(b)s AND source_id = ANY(%(ids)s) UNION ALL SELECT target_id "
        "FROM knowledge_edges WHERE brain_id = %(b)s AND target_id = ANY(%(ids)s)) ends "
        "GROUP BY n",
        {"b": brain_id, "ids": ids},
    ).fetchall()
    found = {str(r[0]): int(r[1]) for r in rows}
    return {node_id: found.get(node_id, 0) for node_id in ids}


def _current(
    conn: Conn, brain_id: str, op: str, row_id: str, like: dict[str, Any]
) -> dict[str, Any] | None:
    table, _ordered, _json_cols, blobs = TABLES[op]
    names = [c for c in columns(op) if c in like and c not in blobs] or ["id"]
    row = conn.execute(
        f"SELECT {', '.join(names)} FROM {table} WHERE brain_id = %s AND id = %s FOR UPDATE",
        (brain_id, row_id),
    ).fetchone()
    return None if row is None else _as_journal(op, names, row)


def undo(conn: Conn, brain_id: str, batch: WriteBatch, entry: JournalEntry) -> None:
    """The inverse of one journaled node or edge write, with the rules of a file: the row
    must still be as the batch left it, and a node edges use since is not removed."""
    op, row_id = entry.op, entry.trace_id
    current = _current(conn, brain_id, op, row_id, entry.after or entry.before or {})
    if entry.after is not None and current != entry.after:
        why = "no longer exists" if current is None else "changed since the batch"
        raise Conflict.because(row_id, f"{op} {row_id} {why}")
    if entry.after is None and current is not None:
        raise Conflict.because(row_id, f"{op} {row_id} exists again")
    if entry.before is None and entry.after is not None:  # added: remove it
        if op == "node":
            used = degrees(conn, brain_id, [row_id])[row_id]
            if used:
                raise Conflict.because(
                    row_id, f"node {row_id} is used by {used} row(s) of knowledge_edges"
                )
        conn.execute(
            f"DELETE FROM {TABLES[op][0]} WHERE brain_id = %s AND id = %s", (brain_id, row_id)
        )
        journal(conn, batch, brain_id, op, row_id, entry.after, None)
    elif entry.before is not None and entry.after is not None:  # changed: restore
        update_row(conn, batch, brain_id, op, dict(entry.after), dict(entry.before, id=row_id))
    elif entry.before is not None:  # removed: put it back
        if op == "edge":
            for node_id in (entry.before["source_id"], entry.before["target_id"]):
                if not node_exists(conn, brain_id, node_id):
                    raise Conflict.because(row_id, f"node {node_id} of edge {row_id} is gone")
        insert_row(conn, batch, brain_id, op, dict(entry.before))


def node_row(conn: Conn, brain_id: str, node_id: str) -> tuple[Any, ...] | None:
    """(id, type, label, properties) of a node, or None."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT id, type, label, properties FROM knowledge_nodes WHERE brain_id = %s AND id = %s",
        (brain_id, node_id),
    ).fetchone()
    return row


def edge_id(conn: Conn, brain_id: str, source: str, target: str, kind: str) -> str | None:
    """The id of the edge `source → target` of type `kind`, if there is one."""
    row = conn.execute(
        "SELECT id FROM knowledge_edges WHERE brain_id = %s AND source_id = %s AND "
        "target_id = %s AND type = %s ORDER BY id LIMIT 1",
        (brain_id, source, target, kind),
    ).fetchone()
    return None if row is None else str(row[0])


def edge_rows_of(conn: Conn, brain_id: str, node_id: str) -> list[dict[str, Any]]:
    """Every edge at `node_id` as stored (JSON columns as text), oldest first."""
    names = [c for c in columns("edge") if c not in TABLES["edge"][3]]
    found = conn.execute(
        f"SELECT {', '.join(names)} FROM knowledge_edges WHERE brain_id = %(b)s AND "
        "(source_id = %(n)s OR target_id = %(n)s) ORDER BY created_at, id",
        {"b": brain_id, "n": node_id},
    ).fetchall()
    return [dict(zip(names, row, strict=True)) for row in found]
