"""The SQL of the graph view: a set of ids in, rows out, by index lookups only.

Every statement takes its ids as one JSON array (`json_each`), so a level of a neighbourhood
is a handful of statements whatever its size, and each id is a seek in an index: the primary
keys of `memory_traces`, `knowledge_nodes` and `memory_links` (brain, from, to, kind), and the
indexes on `memory_links.to_id` (with every key column, schema 8) and `knowledge_edges`
source and target (and both ends together, schema 7). Nothing here scans a table. The
caller holds the connection's lock.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import orjson

from memgui.core import decay
from memgui.core.decay import finite_number
from memgui.core.graph_view.shapes import (
    GRAPH,
    LINK,
    NODE,
    TRACE,
    GraphEdge,
    GraphNode,
    edge_key,
    link_key,
    trace_label,
)
from memgui.core.storage import degrees as kept_degrees
from memgui.core.storage import schema
from memgui.core.storage.db import Database

# (owner, other, edge): an edge seen from one of its ends
Incident = tuple[str, str, GraphEdge]
# Without statistics SQLite prefers the primary key's covering index for `to_id = ?`, and
# walks every link of the brain (its prefix is the brain id): a link's target is found by
# the index made for it; and for a hub's edges to given nodes, the given node's end is the
# one to seek (the hub's end would walk all its edges once per node). CROSS JOIN likewise
# keeps the id list the outer loop.
BY_TARGET = "INDEXED BY idx_memory_links_to"


def _by_target(db: Database) -> str:
    """The index that finds links by their target: schema 8's covering one where the brain
    has it (no row read per link), else the older one of (brain, to)."""
    if schema.LINK_TARGET_INDEX in db.indexes:
        return f"INDEXED BY {schema.LINK_TARGET_INDEX}"
    return BY_TARGET


def _ids(ids: Iterable[str]) -> str:
    return orjson.dumps(list(ids)).decode()


def link_edge(from_id: str, to_id: str, kind: str) -> GraphEdge:
    """A memgui link as an edge: `relates_to` has no direction."""
    key = link_key(from_id, to_id, kind)
    return GraphEdge(key, from_id, to_id, kind, LINK, directed=kind != "relates_to")


def graph_edge(
    edge_id: str, source: str, target: str, kind: object, weight: object, both: object
) -> GraphEdge:
    """A knowledge edge as an edge: directed unless `bidirectional`."""
    key = edge_key(edge_id)
    return GraphEdge(key, source, target, str(kind), GRAPH, not both, finite_number(weight, 1.0))


def has_links(db: Database) -> bool:
    return "memory_links" in db.tables


def has_graph(db: Database) -> bool:
    return {"knowledge_nodes", "knowledge_edges"} <= db.tables


def incident(
    db: Database, brain_id: str, ids: Iterable[str], among: Collection[str] | None = None
) -> list[Incident]:
    """Every link and knowledge edge touching one of `ids`, seen from that end; with `among`,
    only those whose other end is one of `among` (sifted in SQL: a neighbourhood's last level
    reads thousands of edges that lead out of it, and makes none of them)."""
    params: tuple[str, ...] = (brain_id, _ids(ids))
    to_among = from_among = source_among = target_among = ""
    if among is not None:
        params += (_ids(among),)
        # `+`: a filter on the rows found, never an index seek per id of `among`
        among_sql = " IN (SELECT value FROM json_each(?3))"
        to_among, from_among = f" WHERE +l.to_id{among_sql}", f" WHERE +l.from_id{among_sql}"
        source_among = f" WHERE +e.source_id{among_sql}"
        target_among = f" WHERE +e.target_id{among_sql}"
    out: list[Incident] = []
    conn = db.conn
    if has_links(db):
        for owner, from_id, to_id, kind in conn.execute(
            "SELECT j.value, l.from_id, l.to_id, l.kind FROM json_each(?2) j CROSS "
            f"JOIN memory_links l ON l.brain_id = ?1 AND l.from_id = j.value{to_among} "
            "UNION ALL SELECT j.value, l.from_id, l.to_id, l.kind FROM json_each(?2) j CROSS "
            f"JOIN memory_links l {_by_target(db)} ON l.brain_id = ?1 AND l.to_id = j.value"
            f"{from_among}",
            params,
        ):
            edge = link_edge(from_id, to_id, kind)
            out.append((owner, to_id if owner == from_id else from_id, edge))
    if has_graph(db):
        for owner, edge_id, source, target, kind, weight, both in conn.execute(
            "SELECT j.value, e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional "
            "FROM json_each(?2) j CROSS JOIN knowledge_edges e "
            f"ON e.brain_id = ?1 AND e.source_id = j.value{target_among} "
            "UNION ALL SELECT j.value, e.id, e.source_id, e.target_id, e.type, e.weight, "
            "e.bidirectional FROM json_each(?2) j CROSS JOIN knowledge_edges e "
            f"ON e.brain_id = ?1 AND e.target_id = j.value{source_among}",
            params,
        ):
            edge = graph_edge(edge_id, source, target, kind, weight, both)
            if source == target:
                continue  # a loop draws nothing useful
            out.append((owner, target if owner == source else source, edge))
    return out


def incident_within(db: Database, brain_id: str, node_id: str, others: set[str]) -> list[Incident]:
    """The edges between `node_id` (a hub: too many edges to read) and the ids of `others`,
    each found by a seek per id."""
    if not others:
        return []
    array = _ids(sorted(others))
    out: list[Incident] = []
    conn = db.conn
    if has_links(db):
        for from_id, to_id, kind in conn.execute(
            "SELECT l.from_id, l.to_id, l.kind FROM json_each(?3) j CROSS JOIN memory_links l "
            "ON l.brain_id = ?1 AND l.from_id = ?2 AND l.to_id = j.value "
            "UNION ALL SELECT l.from_id, l.to_id, l.kind FROM json_each(?3) j CROSS "
            "JOIN memory_links l ON l.brain_id = ?1 AND l.from_id = j.value AND l.to_id = ?2",
            (brain_id, node_id, array),
        ):
            edge = link_edge(from_id, to_id, kind)
            out.append((node_id, to_id if node_id == from_id else from_id, edge))
    if has_graph(db):
        by_source, by_target = _pair_indexes(db)
        for edge_id, source, target, kind, weight, both in conn.execute(
            "SELECT e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional "
            f"FROM json_each(?3) j CROSS JOIN knowledge_edges e INDEXED BY {by_source} "
            "ON e.brain_id = ?1 AND e.source_id = j.value AND e.target_id = ?2 UNION ALL "
            "SELECT e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional "
            f"FROM json_each(?3) j CROSS JOIN knowledge_edges e INDEXED BY {by_target} "
            "ON e.brain_id = ?1 AND e.target_id = j.value AND e.source_id = ?2",
            (brain_id, node_id, array),
        ):
            if source == target:
                continue
            edge = graph_edge(edge_id, source, target, kind, weight, both)
            out.append((node_id, target if node_id == source else source, edge))
    return out


def _pair_indexes(db: Database) -> tuple[str, str]:
    """The indexes that find the edges from a given id to another: both ends at once where
    the brain has memgui's pair indexes (schema 7), else one end, each row then read."""
    if schema.EDGE_SOURCE_TARGET_INDEX in db.indexes:
        return schema.EDGE_SOURCE_TARGET_INDEX, schema.EDGE_TARGET_SOURCE_INDEX
    return "idx_knowledge_edges_brain_source", "idx_knowledge_edges_brain_target"


def edges_among(db: Database, brain_id: str, ids: Iterable[str]) -> dict[str, GraphEdge]:
    """Every link and knowledge edge with both ends in `ids`, each read once (from its
    source's side)."""
    wanted = set(ids)
    array = _ids(wanted)
    out: dict[str, GraphEdge] = {}
    if has_links(db):
        for from_id, to_id, kind in db.conn.execute(
            "SELECT l.from_id, l.to_id, l.kind FROM json_each(?2) j CROSS JOIN memory_links l "
            "ON l.brain_id = ?1 AND l.from_id = j.value",
            (brain_id, array),
        ):
            if to_id not in wanted:
                continue
            edge = link_edge(from_id, to_id, kind)
            out[edge.key] = edge
    if has_graph(db):
        for edge_id, source, target, kind, weight, both in db.conn.execute(
            "SELECT e.id, e.source_id, e.target_id, e.type, e.weight, e.bidirectional "
            "FROM json_each(?2) j CROSS JOIN knowledge_edges e "
            "INDEXED BY idx_knowledge_edges_brain_source ON e.brain_id = ?1 "
            "AND e.source_id = j.value",
            (brain_id, array),
        ):
            if target not in wanted or target == source:
                continue
            edge = graph_edge(edge_id, source, target, kind, weight, both)
            out[edge.key] = edge
    return out


def edge_ends(db: Database, brain_id: str, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    if not has_graph(db):
        return {}
    return {
        str(edge_id): (str(source), str(target))
        for edge_id, source, target in db.conn.execute(
            "SELECT e.id, e.source_id, e.target_id FROM json_each(?2) j CROSS "
            "JOIN knowledge_edges e ON e.brain_id = ?1 AND e.id = j.value",
            (brain_id, _ids(ids)),
        )
    }


def degrees(db: Database, brain_id: str, ids: Iterable[str]) -> dict[str, int]:
    """How many links and knowledge edges each id has: kept in `memgui_degrees` (schema 4),
    else counted in the indexes."""
    ids = list(ids)
    out = dict.fromkeys(ids, 0)
    if not ids:
        return out
    if kept_degrees.is_kept(db.tables, db.triggers):
        for node_id, count in db.conn.execute(
            "SELECT d.node_id, d.degree FROM json_each(?2) j CROSS JOIN memgui_degrees d "
            "ON d.brain_id = ?1 AND d.node_id = j.value",
            (brain_id, _ids(ids)),
        ):
            out[node_id] = int(count)
        return out
    parts = []
    if has_links(db):
        parts += [
            "(SELECT count(*) FROM memory_links WHERE brain_id = ?1 AND from_id = j.value)",
            "(SELECT count(*) FROM memory_links WHERE brain_id = ?1 AND to_id = j.value)",
        ]
    if has_graph(db):
        parts += [
            "(SELECT count(*) FROM knowledge_edges WHERE brain_id = ?1 AND source_id = j.value)",
            "(SELECT count(*) FROM knowledge_edges WHERE brain_id = ?1 AND target_id = j.value)",
        ]
    if not parts:
        return out
    sql = f"SELECT j.value, {' + '.join(parts)} FROM json_each(?2) j"
    for node_id, count in db.conn.execute(sql, (brain_id, _ids(ids))):
        out[node_id] = int(count)
    return out


def _trace_columns(db: Database) -> str:
    columns = db.trace_columns
    scope_id = (
        "t.scope_id"
        if "scope_id" in columns
        else "coalesce(CASE WHEN json_valid(t.metadata) AND json_type(t.metadata, '$.scopeId') "
        "= 'text' THEN json_extract(t.metadata, '$.scopeId') END, '')"
    )
    category = "t.category" if "category" in columns else "NULL"
    superseded = (
        f"EXISTS (SELECT 1 FROM memory_links s {_by_target(db)} WHERE s.brain_id = t.brain_id "
        "AND s.to_id = t.id AND s.kind = 'supersedes')"
        if has_links(db)
        else "0"
    )
    meta = "CASE WHEN json_valid(t.metadata) THEN json_extract(t.metadata, '$.{}') END"
    return (
        f"t.id, t.type, t.scope, {scope_id}, {category}, t.tags, t.strength, t.created_at, "
        f"t.last_accessed, t.retrieval_count, t.deleted, {meta.format('decay.stability')}, "
        f"{meta.format('title')}, {meta.format('source_file')}, substr(t.content, 1, 240), "
        f"{superseded}"
    )


def trace_nodes(db: Database, brain_id: str, ids: Iterable[str], now: int) -> dict[str, GraphNode]:
    """The traces among `ids` (forgotten ones too; unknown ids are absent), degree 0."""
    out: dict[str, GraphNode] = {}
    if "memory_traces" not in db.tables:
        return out
    sql = (
        f"SELECT {_trace_columns(db)} FROM json_each(?2) j CROSS "
        "JOIN memory_traces t ON t.brain_id = ?1 AND t.id = j.value"
    )
    for row in db.conn.execute(sql, (brain_id, _ids(ids))):
        node = trace_node(row, now)
        out[node.id] = node
    return out


def trace_node(row: tuple[Any, ...], now: int) -> GraphNode:
    (
        trace_id,
        trace_type,
        scope,
        scope_id,
        category,
        tags,
        stored,
        created_at,
        last_accessed,
        retrievals,
        deleted,
        stability,
        title,
        source_file,
        text,
        superseded,
    ) = row
    created = int(finite_number(created_at, 0.0))
    accessed = None if last_accessed is None else int(finite_number(last_accessed, created))
    stability_ms = decay.positive_number(stability) or decay.default_stability(category)
    since = accessed if accessed is not None else created
    strength = finite_number(stored, 1.0) * math.exp(-max(0.0, now - since) / stability_ms)
    return GraphNode(
        id=trace_id,
        kind=TRACE,
        label=trace_label(title, source_file, text or ""),
        type=str(trace_type),
        scope=str(scope),
        scope_id=str(scope_id or ""),
        category=category,
        tags=_tags(tags),
        strength=strength,
        retrieval_count=int(finite_number(retrievals, 0.0)),
        created_at=created,
        last_accessed=accessed,
        deleted=bool(deleted),
        superseded=bool(superseded),
    )


def knowledge_nodes(db: Database, brain_id: str, ids: Iterable[str]) -> dict[str, GraphNode]:
    out: dict[str, GraphNode] = {}
    if not has_graph(db):
        return out
    for node_id, node_type, label, confidence, created_at in db.conn.execute(
        "SELECT n.id, n.type, n.label, n.confidence, n.created_at FROM json_each(?2) j CROSS "
        "JOIN knowledge_nodes n ON n.brain_id = ?1 AND n.id = j.value",
        (brain_id, _ids(ids)),
    ):
        out[node_id] = GraphNode(
            id=node_id,
            kind=NODE,
            label=str(label or node_id),
            type=str(node_type),
            strength=finite_number(confidence, 1.0),
            created_at=int(finite_number(created_at, 0.0)),
        )
    return out


def graph_nodes(db: Database, brain_id: str, ids: Iterable[str], now: int) -> dict[str, GraphNode]:
    """The nodes `ids` name: a trace where one has the id (its memory-graph copy is it),
    else the knowledge node; unknown ids are absent."""
    ids = list(ids)
    found = trace_nodes(db, brain_id, ids, now)
    rest = [i for i in ids if i not in found]
    if rest:
        found.update(knowledge_nodes(db, brain_id, rest))
    return found


def _tags(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, str | bytes) or not raw:
        return ()
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ()
    return tuple(t for t in value if isinstance(t, str)) if isinstance(value, list) else ()


class GraphRows(Protocol):
    """What a neighbourhood reads, on either engine: this module's SQL on a file
    (`FileGraphRows`), `storage/postgres_graph_view.py` on a shared brain."""

    def incident(
        self, ids: Iterable[str], among: Collection[str] | None = None
    ) -> list[Incident]: ...

    def incident_within(self, node_id: str, others: set[str]) -> list[Incident]: ...

    def degrees(self, ids: Iterable[str]) -> dict[str, int]: ...

    def graph_nodes(self, ids: Iterable[str], now: int) -> dict[str, GraphNode]: ...

    def edge_ends(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]: ...


class FileGraphRows:
    """A brain file's rows (the caller holds the connection's lock: `reading`)."""

    def __init__(self, db: Database, brain_id: str) -> None:
        self.db = db
        self.brain_id = brain_id

    def incident(self, ids: Iterable[str], among: Collection[str] | None = None) -> list[Incident]:
        return incident(self.db, self.brain_id, ids, among)

    def incident_within(self, node_id: str, others: set[str]) -> list[Incident]:
        return incident_within(self.db, self.brain_id, node_id, others)

    def degrees(self, ids: Iterable[str]) -> dict[str, int]:
        return degrees(self.db, self.brain_id, ids)

    def graph_nodes(self, ids: Iterable[str], now: int) -> dict[str, GraphNode]:
        return graph_nodes(self.db, self.brain_id, ids, now)

    def edge_ends(self, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
        return edge_ends(self.db, self.brain_id, ids)


@contextmanager
def file_rows(db: Database, brain_id: str) -> Iterator[FileGraphRows]:
    """A file's rows, under the connection's lock for as long as the reads take."""
    with db.lock:
        yield FileGraphRows(db, brain_id)
