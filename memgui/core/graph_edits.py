"""Edits of the knowledge graph the graph view offers, each one journaled write a revert undoes.

- `connect`: an edge between two nodes, a trace standing as its knowledge-graph copy (the
  AgentOS `memory_graph` node whose id is the trace's, made when missing);
- `remove_edge`: one knowledge edge;
- `delete_node`: a knowledge node and every edge naming it (never an edge left pointing at
  nothing);
- `merge_nodes`: knowledge nodes into one survivor: the others' edges are moved to it (an
  edge it already has, or one that would join it to itself, is dropped), then they go.

On a shared brain (PostgreSQL) each is `shared_graph_edits`' with the same checks and rows.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from memgui.core.changes import (
    Changes,
    ChangesWithCount,
    ChangesWithId,
    with_count,
    with_id,
)
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.graph import node_properties
from memgui.core.graph_edit_rules import MEMORY_GRAPH, checked_merge, edge_type_of
from memgui.core.model import check_id
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.db import WriteBatch

EDGE_COLUMNS = "id, source_id, target_id, type, weight, bidirectional, metadata, created_at"


def _node_row(brain: BrainContext, node_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = brain.db.conn.execute(
        "SELECT id, type, label, properties FROM knowledge_nodes WHERE brain_id = ? AND id = ?",
        (brain.brain_id, node_id),
    ).fetchone()
    return row


def _graph_end(brain: BrainContext, batch: WriteBatch, end_id: str) -> None:
    """`end_id` as a node of the graph: a knowledge node, or a live trace's copy (made now)."""
    if _node_row(brain, end_id) is not None:
        return
    row = store.fetch_row(brain.db, brain.brain_id, end_id)
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
    journal_rows.insert_row(brain.db, batch, brain.brain_id, "node", node)


def _shared(brain: object) -> SharedBrain | None:
    """`brain` when it is a shared brain (PostgreSQL): its edits are `shared_graph_edits`'."""
    from memgui.core.shared_brain import SharedBrain

    return brain if isinstance(brain, SharedBrain) else None


def connect(
    brain: BrainContext, source_id: str, target_id: str, type: str, actor: str | None = None
) -> ChangesWithId:
    """A knowledge edge `source → target` of `type`; `.id` is its id (an existing one of the
    same ends and type is kept as it is: nothing changed)."""
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_graph_edits

        return shared_graph_edits.connect(shared, source_id, target_id, type, actor)
    check_id("source_id", source_id, "trace or node id")
    check_id("target_id", target_id, "trace or node id")
    edge_type = edge_type_of(type)
    if source_id == target_id:
        raise InvalidArgument("target_id", f"must differ from source_id (got {target_id!r})")
    write = brain.write("connect", actor=actor)
    with write as batch:
        existing = _edge_id(brain, source_id, target_id, edge_type)
        if existing is not None:
            return with_id(Changes(kind="edit", actor=batch.actor), existing)
        for end in (source_id, target_id):
            _graph_end(brain, batch, end)
        edge = {
            "id": f"ke_{uuid.uuid4()}",
            "source_id": source_id,
            "target_id": target_id,
            "type": edge_type,
            "weight": 1.0,
            "bidirectional": 0,
            "metadata": {},
            "created_at": brain.now(),
        }
        journal_rows.insert_row(brain.db, batch, brain.brain_id, "edge", edge)
    return with_id(write.changes, str(edge["id"]))


def remove_edge(brain: BrainContext, edge_id: str, actor: str | None = None) -> Changes:
    """Remove one knowledge edge; nothing changed (false) when there was none of that id."""
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_graph_edits

        return shared_graph_edits.remove_edge(shared, edge_id, actor)
    check_id("edge_id", edge_id, "edge id")
    write = brain.write("remove edge", actor=actor)
    with write as batch:
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "edge", "id = ?2", (edge_id,))
    return write.changes


def delete_node(brain: BrainContext, node_id: str, actor: str | None = None) -> ChangesWithCount:
    """Delete a knowledge node and its edges; `.count` is how many edges went with it. A
    live trace's copy is not deleted here: forget the trace."""
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_graph_edits

        return shared_graph_edits.delete_node(shared, node_id, actor)
    check_id("node_id", node_id, "node id")
    write = brain.write("delete node", actor=actor)
    with write as batch:
        row = _node_row(brain, node_id)
        if row is None:
            raise NotFound(node_id, "node")
        if store.fetch_row(brain.db, brain.brain_id, node_id) is not None:
            raise InvalidArgument(
                "node_id", f"is a memory's copy in the graph (forget the memory instead): {node_id}"
            )
        gone = journal_rows.delete_rows(
            brain.db, batch, brain.brain_id, "edge", "source_id = ?2 OR target_id = ?2", (node_id,)
        )
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "node", "id = ?2", (node_id,))
    return with_count(write.changes, gone)


def merge_nodes(
    brain: BrainContext, ids: list[str], survivor: str, actor: str | None = None
) -> ChangesWithCount:
    """Merge knowledge nodes into `survivor` (one of `ids`); `.count` is how many edges
    moved to it (the others, already its own or joining it to itself, were dropped)."""
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_graph_edits

        return shared_graph_edits.merge_nodes(shared, ids, survivor, actor)
    unique = checked_merge(ids, survivor)
    moved = 0
    write = brain.write("merge nodes", actor=actor)
    with write as batch:
        for node_id in unique:
            if _node_row(brain, node_id) is None:
                raise NotFound(node_id, "node")
            if store.fetch_row(brain.db, brain.brain_id, node_id) is not None:
                raise InvalidArgument(
                    "ids", f"must name knowledge nodes, not memories (got {node_id})", node_id
                )
        for gone in (i for i in unique if i != survivor):
            moved += _move_edges(brain, batch, gone, survivor, drop_within=set(unique))
            journal_rows.delete_rows(brain.db, batch, brain.brain_id, "node", "id = ?2", (gone,))
    return with_count(write.changes, moved)


def _move_edges(
    brain: BrainContext, batch: WriteBatch, gone: str, survivor: str, drop_within: set[str]
) -> int:
    moved = 0
    for row in _edges_of(brain, gone):
        edge = dict(zip(EDGE_COLUMNS.split(", "), row, strict=True))
        source = survivor if edge["source_id"] == gone else edge["source_id"]
        target = survivor if edge["target_id"] == gone else edge["target_id"]
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "edge", "id = ?2", (edge["id"],))
        loop = source in drop_within and target in drop_within
        if loop or _edge_id(brain, source, target, edge["type"]) is not None:
            continue
        copy = dict(edge, source_id=source, target_id=target)
        copy["metadata"] = node_properties(edge["metadata"] or "{}")
        journal_rows.insert_row(brain.db, batch, brain.brain_id, "edge", copy)
        moved += 1
    return moved


def _edges_of(brain: BrainContext, node_id: str) -> list[tuple[Any, ...]]:
    return list(
        brain.db.conn.execute(
            f"SELECT {EDGE_COLUMNS} FROM knowledge_edges WHERE brain_id = ?1 AND source_id = ?2 "
            f"UNION ALL SELECT {EDGE_COLUMNS} FROM knowledge_edges WHERE brain_id = ?1 "
            "AND target_id = ?2 AND source_id != ?2 ORDER BY created_at, id",
            (brain.brain_id, node_id),
        )
    )


def _edge_id(brain: BrainContext, source: str, target: str, edge_type: str) -> str | None:
    """The id of the knowledge edge `source → target` of `edge_type`, if there is one."""
    row = brain.db.conn.execute(
        "SELECT id FROM knowledge_edges WHERE brain_id = ? AND source_id = ? AND "
        "target_id = ? AND type = ?",
        (brain.brain_id, source, target, edge_type),
    ).fetchone()
    return None if row is None else str(row[0])
