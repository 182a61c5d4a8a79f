"""The knowledge graph of a shared brain, with the rules of a file (`core/graph.py`,
`core/merge_moves.py`): nodes and edges added and journaled, neighbourhoods walked by the
indexes on an edge's ends, and a merge's edges moved to the survivor. The SQL is in
`storage/postgres_graph.py`."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from memgui.core import graph, merge_moves
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import Neighbour
from memgui.core.storage import postgres, postgres_graph, store
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg

    Conn = psycopg.Connection[tuple[Any, ...]]


def new_node(label: str, type: str, properties: dict[str, Any] | None, now: int) -> dict[str, Any]:
    """A node's row, its arguments checked as on a file."""
    graph.check_label_and_type(label, type)
    if properties is not None and not isinstance(properties, dict):
        raise InvalidArgument("properties", f"must be a JSON object (got {properties!r})")
    if properties:
        store.check_json("properties", properties)
    return {
        "id": f"kn_{uuid.uuid4()}",
        "type": type,
        "label": label,
        "properties": properties or {},
        "created_at": now,
    }


def add_edge(
    conn: Conn,
    batch: WriteBatch,
    brain_id: str,
    ends: tuple[str, str],
    type: str,
    weight: float,
    now: int,
) -> str:
    """An edge between two existing nodes; its id."""
    source_id, target_id = ends
    for node_id in ends:
        if not postgres_graph.node_exists(conn, brain_id, node_id):
            raise NotFound(node_id, "node")
    row = {
        "id": f"ke_{uuid.uuid4()}",
        "source_id": source_id,
        "target_id": target_id,
        "type": type,
        "weight": weight,
        "created_at": now,
    }
    postgres_graph.insert_row(conn, batch, brain_id, "edge", row)
    return str(row["id"])


def neighbours(
    conn: Conn, brain_id: str, start_id: str, depth: int, limit: int
) -> tuple[list[Neighbour], bool]:
    """`core/graph.py`'s neighbours_and_more on PostgreSQL: the neighbourhood, and whether
    more than `limit` lie within `depth`."""
    graph.check_neighbours_query(start_id, depth, limit)
    with conn.transaction():  # one snapshot of the graph for the whole walk
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        start = _start_nodes(conn, brain_id, start_id)
        found = graph.walk(
            start, depth, limit + 1, lambda node: postgres_graph.edges_of(conn, brain_id, node)
        )
    return found[:limit], len(found) > limit


def _start_nodes(conn: Conn, brain_id: str, start_id: str) -> list[str]:
    """A node id, or a trace id: the nodes naming it, else itself (an edge's end)."""
    if postgres_graph.node_exists(conn, brain_id, start_id):
        return [start_id]
    if postgres.fetch_row(conn, brain_id, start_id) is None:
        raise NotFound(start_id, "trace or node")
    return postgres_graph.nodes_naming(conn, brain_id, [start_id]) or [start_id]


def move_edges(
    conn: Conn,
    batch: WriteBatch,
    brain_id: str,
    merged: list[str],
    survivor: dict[str, Any],
    now: int,
) -> None:
    """The merged traces' knowledge-graph edges go to the survivor's node, as on a file
    (`merge_moves.move_edges`): moved, not copied; one the survivor has already, or one
    between the merged traces themselves, only goes."""
    gone = set(merged) | set(postgres_graph.nodes_naming(conn, brain_id, merged))
    kept = {survivor["id"], *postgres_graph.nodes_naming(conn, brain_id, [survivor["id"]])}
    edges = postgres_graph.edges_touching(conn, brain_id, sorted(gone))
    if not edges:
        return
    node = survivor["id"]
    if not postgres_graph.node_exists(conn, brain_id, node):
        named = sorted(kept - {node})
        node = named[0] if named else node
        if node == survivor["id"]:
            made = merge_moves.memory_graph_node(survivor, now)
            postgres_graph.insert_row(conn, batch, brain_id, "node", made)
    ours = kept | {node}
    for edge_id, source, target, kind in edges:
        new_source = node if source in gone else source
        new_target = node if target in gone else target
        twin = postgres_graph.has_twin(conn, brain_id, new_source, new_target, kind, edge_id)
        if (new_source in ours and new_target in ours) or twin:
            postgres_graph.delete_rows(conn, batch, brain_id, "edge", "id = %s", (edge_id,))
            continue
        postgres_graph.update_row(
            conn,
            batch,
            brain_id,
            "edge",
            {"id": edge_id, "source_id": source, "target_id": target},
            {"id": edge_id, "source_id": new_source, "target_id": new_target},
        )
