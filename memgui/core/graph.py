"""The knowledge graph: AgentOS `knowledge_nodes` / `knowledge_edges`, and neighbourhoods."""

from __future__ import annotations

import json
import math
import sys
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from memgui.core.changes import ChangesWithId, with_id
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import (
    MAX_NEIGHBOURS,
    NEIGHBOURS_CAP,
    Neighbour,
    check_depth,
    check_id,
    check_int_range,
    check_text,
)
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext

MAX_PAGE = 10_000  # nodes/edges per page: the graph view pages through a large graph
MAX_OFFSET = 2**62


def _text(field: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(field, f"must be a non-empty string (got {value!r})", value)
    return check_text(field, value)


def check_label_and_type(label: object, type: object) -> None:
    """A node's label and type, on either engine."""
    _text("label", label)
    _text("type", type)


def check_edge(source_id: object, target_id: object, type: object, weight: object) -> float:
    """An edge's ends, type and weight, on either engine; the weight as a float."""
    _text("source_id", source_id)
    _text("target_id", target_id)
    _text("type", type)
    return _weight(weight)


def add_node(
    brain: BrainContext, label: str, type: str, properties: dict[str, Any] | None
) -> ChangesWithId:
    check_label_and_type(label, type)
    if properties is not None and not isinstance(properties, dict):
        raise InvalidArgument("properties", f"must be a JSON object (got {properties!r})")
    if properties:
        store.check_json("properties", properties)
    node_id = f"kn_{uuid.uuid4()}"
    row = {
        "id": node_id,
        "type": type,
        "label": label,
        "properties": properties or {},
        "created_at": brain.now(),
    }
    write = brain.write("add node")
    with write as batch:
        # Journaled as an import's nodes are, so `revert` removes it the same way.
        journal_rows.insert_row(brain.db, batch, brain.brain_id, "node", row)
    return with_id(write.changes, node_id)


def _node_exists(brain: BrainContext, node_id: str) -> bool:
    return (
        brain.db.conn.execute(
            "SELECT 1 FROM knowledge_nodes WHERE brain_id = ? AND id = ?",
            (brain.brain_id, node_id),
        ).fetchone()
        is not None
    )


def add_edge(
    brain: BrainContext, source_id: str, target_id: str, type: str, weight: float
) -> ChangesWithId:
    weight = check_edge(source_id, target_id, type, weight)
    edge_id = f"ke_{uuid.uuid4()}"
    write = brain.write("add edge")
    with write as batch:
        for node_id in (source_id, target_id):
            if not _node_exists(brain, node_id):
                raise NotFound(node_id, "node")
        row = {
            "id": edge_id,
            "source_id": source_id,
            "target_id": target_id,
            "type": type,
            "weight": weight,
            "created_at": brain.now(),
        }
        journal_rows.insert_row(brain.db, batch, brain.brain_id, "edge", row)
    return with_id(write.changes, edge_id)


def _weight(value: object) -> float:
    """A finite float: SQLite stores NaN as NULL and JSON cannot hold inf."""
    problem = f"must be a finite number between {-sys.float_info.max} and {sys.float_info.max}"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidArgument("weight", f"{problem} (got {value!r})", value)
    try:
        number = float(value)
    except OverflowError:  # an int past float range
        number = math.inf
    if not math.isfinite(number):
        raise InvalidArgument("weight", f"{problem} (got {value!r})", value)
    return number


def _rows(brain: BrainContext, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
    with brain.db.lock:
        cursor = brain.db.conn.execute(sql, params)
        try:
            names = [d[0] for d in cursor.getdescription()]
        except apsw.ExecutionCompleteError:
            return []  # no row: apsw has no description once a statement has run to its end
        return [dict(zip(names, row, strict=True)) for row in cursor]


def check_page(limit: object, offset: object) -> None:
    check_int_range("limit", limit, 1, MAX_PAGE)
    check_int_range("offset", offset, 0, MAX_OFFSET)


def nodes(brain: BrainContext, limit: int, offset: int) -> list[dict[str, Any]]:
    check_page(limit, offset)
    return _rows(
        brain,
        "SELECT id, type, label, properties, confidence, created_at FROM knowledge_nodes "
        "WHERE brain_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
        (brain.brain_id, limit, offset),
    )


def edges(brain: BrainContext, limit: int, offset: int) -> list[dict[str, Any]]:
    check_page(limit, offset)
    return _rows(
        brain,
        "SELECT id, source_id, target_id, type, weight, created_at FROM knowledge_edges "
        "WHERE brain_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
        (brain.brain_id, limit, offset),
    )


def _start_nodes(brain: BrainContext, start_id: str) -> list[str]:
    """A node id, or a trace id: its memory_graph node, nodes naming it, or itself as an
    edge endpoint (AgentOS writes edges whose source is the trace id)."""
    conn, bid = brain.db.conn, brain.brain_id
    if _node_exists(brain, start_id):
        return [start_id]
    if store.fetch_row(brain.db, bid, start_id) is None:
        raise NotFound(start_id, "trace or node")
    found = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM knowledge_nodes WHERE brain_id = ? AND json_valid(properties) AND "
            "json_extract(properties, '$.trace_id') = ?",
            (bid, start_id),
        )
    ]
    return found or [start_id]


def neighbours(
    brain: BrainContext, start_id: str, depth: int, limit: int = MAX_NEIGHBOURS
) -> list[Neighbour]:
    """Breadth-first over edges in both directions, up to `depth` hops (1–3), nearest first,
    at most `limit` (1–5,000) of them."""
    return neighbours_and_more(brain, start_id, depth, limit)[0]


def neighbours_and_more(
    brain: BrainContext, start_id: str, depth: int, limit: int = MAX_NEIGHBOURS
) -> tuple[list[Neighbour], bool]:
    """`neighbours`, and whether the graph holds more within `depth` than `limit` gave."""
    check_neighbours_query(start_id, depth, limit)
    found = _walk(brain, start_id, depth, limit + 1)
    return found[:limit], len(found) > limit


def _walk(brain: BrainContext, start_id: str, depth: int, limit: int) -> list[Neighbour]:
    with brain.db.lock:
        conn, bid = brain.db.conn, brain.brain_id

        def edges_at(node_id: str) -> list[tuple[Any, ...]]:
            return conn.execute(
                "SELECT CASE WHEN e.source_id = ?1 THEN e.target_id ELSE e.source_id END, "
                "e.type, n.label, n.type, CASE WHEN json_valid(n.properties) "
                "THEN json_extract(n.properties, '$.trace_id') END "
                "FROM knowledge_edges e LEFT JOIN knowledge_nodes n "
                "ON n.brain_id = e.brain_id AND n.id = CASE WHEN e.source_id = ?1 "
                "THEN e.target_id ELSE e.source_id END "
                "WHERE e.brain_id = ?2 AND (e.source_id = ?1 OR e.target_id = ?1) "
                "ORDER BY e.created_at, e.id",
                (node_id, bid),
            ).fetchall()

        return walk(_start_nodes(brain, start_id), depth, limit, edges_at)


def walk(
    start: list[str],
    depth: int,
    limit: int,
    edges_at: Callable[[str], Sequence[Sequence[Any]]],
) -> list[Neighbour]:
    """Breadth-first from the `start` nodes, on any engine: `edges_at(node)` gives each edge
    at a node as (other end, edge type, other's label, other's type, other's trace id),
    oldest first. At most `limit` neighbours, nearest first."""
    frontier = list(start)
    seen = set(frontier)
    labels: dict[str, str] = {}  # node id → label, for the nodes reached through it
    out: list[Neighbour] = []
    for hop in range(1, depth + 1):
        next_frontier: list[str] = []
        for node_id in frontier:
            via = labels.get(node_id, "") if hop > 1 else ""
            for other, edge_type, label, node_type, trace_id in edges_at(node_id):
                if other in seen:
                    continue
                seen.add(other)
                next_frontier.append(other)
                shown = label or other
                labels[other] = shown
                if node_type is None:  # an edge to a trace id itself (AgentOS writes those)
                    trace_id = other
                out.append(
                    Neighbour(
                        other,
                        shown,
                        node_type or "trace",
                        edge_type,
                        hop,
                        via,
                        trace_id if isinstance(trace_id, str) else None,
                    )
                )
                if len(out) >= limit:
                    return out
        frontier = next_frontier
    return out


def check_neighbours_query(start_id: object, depth: object, limit: object) -> None:
    """The arguments of a neighbourhood query, on either engine."""
    check_depth(depth)
    check_int_range("limit", limit, 1, NEIGHBOURS_CAP)
    check_id("id", start_id, "trace or node id")


def node_properties(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
