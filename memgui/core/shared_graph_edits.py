"""The graph view's edits on a shared brain, with the rules of a file (`core/graph_edits.py`):
connect two nodes (a trace standing as its `memory_graph` copy, made when missing), remove
an edge, delete a knowledge node with its edges, merge knowledge nodes into a survivor. Each
is one transaction and one journal batch a revert undoes; the SQL is in
`storage/postgres_graph.py`.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from memgui.core.changes import Changes, ChangesWithCount, ChangesWithId, with_count, with_id
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.graph import node_properties
from memgui.core.graph_edit_rules import MEMORY_GRAPH, checked_merge, edge_type_of
from memgui.core.model import check_id
from memgui.core.storage import postgres, postgres_graph, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.transaction import WriteBatch


def _graph_end(brain: SharedBrain, batch: WriteBatch, end_id: str) -> None:
    """`end_id` as a node of the graph: a knowledge node, or a live trace's copy (made now)."""
    conn, bid = brain.conn, brain.brain_id
    if postgres_graph.node_exists(conn, bid, end_id):
        return
    row = postgres.fetch_row(conn, bid, end_id)
    if row is None:
        raise NotFound(end_id, "trace or node")
    snap = store.row_to_snapshot(row)
    if snap["deleted"]:
        raise InvalidArgument("id", f"must name a live trace (deleted: {end_id})", end_id)
    node = {
        "id": end_id,
        "type": MEMORY_GRAPH,
        "label": end_id,
        "properties": {
            "trace_id": end_id,
            "type": snap["type"],
            "scope": snap["scope"],
            "scopeId": snap["scope_id"],
            "strength": snap["strength"],
            "createdAt": snap["created_at"],
        },
        "confidence": 1.0,
        "source": {"type": "memgui"},
        "created_at": brain.now(),
    }
    postgres_graph.insert_row(conn, batch, bid, "node", node)


def connect(
    brain: SharedBrain, source_id: str, target_id: str, type: str, actor: str | None = None
) -> ChangesWithId:
    """`graph_edits.connect` on a shared brain: `.id` is the edge's id (an existing one of
    the same ends and type is kept: nothing changed)."""
    check_id("source_id", source_id, "trace or node id")
    check_id("target_id", target_id, "trace or node id")
    kind = edge_type_of(type)
    if source_id == target_id:
        raise InvalidArgument("target_id", f"must differ from source_id (got {target_id!r})")
    conn, bid = brain.conn, brain.brain_id
    with brain.writing(actor, "connect") as batch:
        existing = postgres_graph.edge_id(conn, bid, source_id, target_id, kind)
        if existing is not None:
            return with_id(Changes(kind="edit", actor=batch.actor), existing)
        for end in (source_id, target_id):
            _graph_end(brain, batch, end)
        edge = {
            "id": f"ke_{uuid.uuid4()}",
            "source_id": source_id,
            "target_id": target_id,
            "type": kind,
            "weight": 1.0,
            "bidirectional": 0,
            "metadata": {},
            "created_at": brain.now(),
        }
        postgres_graph.insert_row(conn, batch, bid, "edge", edge)
    return with_id(batch.changes(), str(edge["id"]))


def remove_edge(brain: SharedBrain, edge_id: str, actor: str | None = None) -> Changes:
    """Remove one knowledge edge; nothing changed (false) when there was none of that id."""
    check_id("edge_id", edge_id, "edge id")
    with brain.writing(actor, "remove edge") as batch:
        postgres_graph.delete_rows(brain.conn, batch, brain.brain_id, "edge", "id = %s", (edge_id,))
    return batch.changes()


def delete_node(brain: SharedBrain, node_id: str, actor: str | None = None) -> ChangesWithCount:
    """Delete a knowledge node and its edges; `.count`: the edges that went with it. A live
    trace's copy is not deleted here: forget the trace."""
    check_id("node_id", node_id, "node id")
    conn, bid = brain.conn, brain.brain_id
    with brain.writing(actor, "delete node") as batch:
        if postgres_graph.node_row(conn, bid, node_id) is None:
            raise NotFound(node_id, "node")
        if postgres.fetch_row(conn, bid, node_id) is not None:
            raise InvalidArgument(
                "node_id", f"is a memory's copy in the graph (forget the memory instead): {node_id}"
            )
        gone = postgres_graph.delete_rows(
            conn, batch, bid, "edge", "source_id = %s OR target_id = %s", (node_id, node_id)
        )
        postgres_graph.delete_rows(conn, batch, bid, "node", "id = %s", (node_id,))
    return with_count(batch.changes(), gone)


def merge_nodes(
    brain: SharedBrain, ids: list[str], survivor: str, actor: str | None = None
) -> ChangesWithCount:
    """Merge knowledge nodes into `survivor`: `.count` edges moved to it (the others, its
    own already or joining it to itself, were dropped), then the others go."""
    unique = checked_merge(ids, survivor)
    conn, bid = brain.conn, brain.brain_id
    moved = 0
    with brain.writing(actor, "merge nodes") as batch:
        for node_id in unique:
            if postgres_graph.node_row(conn, bid, node_id) is None:
                raise NotFound(node_id, "node")
            if postgres.fetch_row(conn, bid, node_id) is not None:
                raise InvalidArgument(
                    "ids", f"must name knowledge nodes, not memories (got {node_id})", node_id
                )
        for gone in (i for i in unique if i != survivor):
            for edge in postgres_graph.edge_rows_of(conn, bid, gone):
                source = survivor if edge["source_id"] == gone else edge["source_id"]
                target = survivor if edge["target_id"] == gone else edge["target_id"]
                postgres_graph.delete_rows(conn, batch, bid, "edge", "id = %s", (edge["id"],))
                loop = source in unique and target in unique
                if loop or postgres_graph.edge_id(conn, bid, source, target, edge["type"]):
                    continue
                copy = dict(edge, source_id=source, target_id=target)
                copy["metadata"] = node_properties(edge["metadata"] or "{}")
                postgres_graph.insert_row(conn, batch, bid, "edge", copy)
                moved += 1
            postgres_graph.delete_rows(conn, batch, bid, "node", "id = %s", (gone,))
    return with_count(batch.changes(), moved)
