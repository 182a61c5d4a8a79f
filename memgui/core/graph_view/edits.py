"""Edits of the knowledge graph the graph view offers, each one journaled write a revert undoes.

- `connect`: an edge between two nodes, a trace standing as its knowledge-graph copy (the
  AgentOS `memory_graph` node whose id is the trace's, made when missing);
- `remove_edge`: one knowledge edge;
- `delete_node`: a knowledge node and every edge naming it (never an edge left pointing at
  nothing);
- `merge_nodes`: knowledge nodes into one survivor: the others' edges are moved to it (an
  edge it already has, or one that would join it to itself, is dropped), then they go;
- `carry_edges`: a trace merge's knowledge edges, moved to the survivor as its links are.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.graph import node_properties
from memgui.core.model import check_id, check_text
from memgui.core.storage import journal_rows, store

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import WriteBatch

MEMORY_GRAPH = "memory_graph"
EDGE_COLUMNS = "id, source_id, target_id, type, weight, bidirectional, metadata, created_at"


def _edge_type(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument("type", f"must be a non-empty string (got {value!r})", value)
    return check_text("type", value)


def _node_row(brain: Brain, node_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = brain.db.conn.execute(
        "SELECT id, type, label, properties FROM knowledge_nodes WHERE brain_id = ? AND id = ?",
        (brain.brain_id, node_id),
    ).fetchone()
    return row


def _graph_end(brain: Brain, batch: WriteBatch, end_id: str) -> None:
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


def connect(
    brain: Brain, source_id: str, target_id: str, type: str, actor: str | None = None
) -> str:
    """A knowledge edge `source → target` of `type`; returns its id (an existing one of the
    same ends and type is returned as it is)."""
    check_id("source_id", source_id, "trace or node id")
    check_id("target_id", target_id, "trace or node id")
    edge_type = _edge_type(type)
    if source_id == target_id:
        raise InvalidArgument("target_id", f"must differ from source_id (got {target_id!r})")
    with brain.write("connect", actor=actor) as batch:
        existing = brain.db.conn.execute(
            "SELECT id FROM knowledge_edges WHERE brain_id = ? AND source_id = ? "
            "AND target_id = ? AND type = ?",
            (brain.brain_id, source_id, target_id, edge_type),
        ).fetchone()
        if existing is not None:
            return str(existing[0])
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
        batch.nodes.update((source_id, target_id))
    return str(edge["id"])


def remove_edge(brain: Brain, edge_id: str, actor: str | None = None) -> bool:
    """Remove one knowledge edge; False when there was none of that id."""
    check_id("edge_id", edge_id, "edge id")
    with brain.write("remove edge", actor=actor) as batch:
        ends = _edge_ends(brain, edge_id)
        if ends is None:
            return False
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "edge", "id = ?2", (edge_id,))
        batch.nodes.update(ends)
    return True


def delete_node(brain: Brain, node_id: str, actor: str | None = None) -> int:
    """Delete a knowledge node and its edges; returns how many edges went with it. A live
    trace's copy is not deleted here: forget the trace."""
    check_id("node_id", node_id, "node id")
    with brain.write("delete node", actor=actor) as batch:
        row = _node_row(brain, node_id)
        if row is None:
            raise NotFound(node_id, "node")
        if store.fetch_row(brain.db, brain.brain_id, node_id) is not None:
            raise InvalidArgument(
                "node_id", f"is a memory's copy in the graph (forget the memory instead): {node_id}"
            )
        others = _neighbour_ids(brain, node_id)
        gone = journal_rows.delete_rows(
            brain.db, batch, brain.brain_id, "edge", "source_id = ?2 OR target_id = ?2", (node_id,)
        )
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "node", "id = ?2", (node_id,))
        batch.nodes.update(others)
    return gone


def merge_nodes(
    brain: Brain, ids: list[str], survivor: str, actor: str | None = None
) -> dict[str, int]:
    """Merge knowledge nodes into `survivor` (one of `ids`); returns {"moved", "dropped"}."""
    if isinstance(ids, str) or not isinstance(ids, list | tuple):
        raise InvalidArgument("ids", f"must be a list of node ids (got {ids!r:.80})", ids)
    for i, node_id in enumerate(ids):
        check_id(f"ids[{i}]", node_id, "node id")
    unique = list(dict.fromkeys(ids))
    if len(unique) < 2:
        raise InvalidArgument("ids", f"must name at least 2 different nodes (got {list(ids)})")
    if survivor not in unique:
        raise InvalidArgument("survivor", f"must be one of ids (got {survivor!r})", survivor)
    moved = dropped = 0
    with brain.write("merge nodes", actor=actor) as batch:
        for node_id in unique:
            if _node_row(brain, node_id) is None:
                raise NotFound(node_id, "node")
            if store.fetch_row(brain.db, brain.brain_id, node_id) is not None:
                raise InvalidArgument(
                    "ids", f"must name knowledge nodes, not memories (got {node_id})", node_id
                )
        for gone in (i for i in unique if i != survivor):
            m, d = _move_edges(brain, batch, gone, survivor, drop_within=set(unique))
            moved, dropped = moved + m, dropped + d
            journal_rows.delete_rows(brain.db, batch, brain.brain_id, "node", "id = ?2", (gone,))
        batch.nodes.add(survivor)
    return {"moved": moved, "dropped": dropped}


def carry_edges(brain: Brain, batch: WriteBatch, merged: list[str], survivor: str) -> None:
    """A trace merge: the merged traces' knowledge edges to other nodes are copied to the
    survivor (made a graph node when it is not one yet), journaled in the merge's batch.
    The merged traces keep theirs, hidden while they are forgotten, as their links."""
    if not {"knowledge_nodes", "knowledge_edges"} <= brain.db.tables:
        return
    group = {survivor, *merged}
    for gone in merged:
        for row in _edges_of(brain, gone):
            edge = dict(zip(EDGE_COLUMNS.split(", "), row, strict=True))
            source = survivor if edge["source_id"] == gone else edge["source_id"]
            target = survivor if edge["target_id"] == gone else edge["target_id"]
            if source in group and target in group:
                continue
            if _has_edge(brain, source, target, edge["type"]):
                continue
            _graph_end(brain, batch, survivor)
            copy = dict(edge, id=f"ke_{uuid.uuid4()}", source_id=source, target_id=target)
            copy["metadata"] = node_properties(edge["metadata"] or "{}")
            journal_rows.insert_row(brain.db, batch, brain.brain_id, "edge", copy)
            batch.nodes.update((source, target))


def _move_edges(
    brain: Brain, batch: WriteBatch, gone: str, survivor: str, drop_within: set[str]
) -> tuple[int, int]:
    moved = dropped = 0
    for row in _edges_of(brain, gone):
        edge = dict(zip(EDGE_COLUMNS.split(", "), row, strict=True))
        source = survivor if edge["source_id"] == gone else edge["source_id"]
        target = survivor if edge["target_id"] == gone else edge["target_id"]
        journal_rows.delete_rows(brain.db, batch, brain.brain_id, "edge", "id = ?2", (edge["id"],))
        batch.nodes.update((edge["source_id"], edge["target_id"]))
        loop = source in drop_within and target in drop_within
        if loop or _has_edge(brain, source, target, edge["type"]):
            dropped += 1
            continue
        copy = dict(edge, source_id=source, target_id=target)
        copy["metadata"] = node_properties(edge["metadata"] or "{}")
        journal_rows.insert_row(brain.db, batch, brain.brain_id, "edge", copy)
        moved += 1
    return moved, dropped


def _edges_of(brain: Brain, node_id: str) -> list[tuple[Any, ...]]:
    return list(
        brain.db.conn.execute(
            f"SELECT {EDGE_COLUMNS} FROM knowledge_edges WHERE brain_id = ?1 AND source_id = ?2 "
            f"UNION ALL SELECT {EDGE_COLUMNS} FROM knowledge_edges WHERE brain_id = ?1 "
            "AND target_id = ?2 AND source_id != ?2 ORDER BY created_at, id",
            (brain.brain_id, node_id),
        )
    )


def _has_edge(brain: Brain, source: str, target: str, edge_type: str) -> bool:
    return (
        brain.db.conn.execute(
            "SELECT 1 FROM knowledge_edges WHERE brain_id = ? AND source_id = ? AND "
            "target_id = ? AND type = ?",
            (brain.brain_id, source, target, edge_type),
        ).fetchone()
        is not None
    )


def _edge_ends(brain: Brain, edge_id: str) -> tuple[str, str] | None:
    row = brain.db.conn.execute(
        "SELECT source_id, target_id FROM knowledge_edges WHERE brain_id = ? AND id = ?",
        (brain.brain_id, edge_id),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def _neighbour_ids(brain: Brain, node_id: str) -> set[str]:
    return {
        str(r[0])
        for r in brain.db.conn.execute(
            "SELECT target_id FROM knowledge_edges WHERE brain_id = ?1 AND source_id = ?2 "
            "UNION SELECT source_id FROM knowledge_edges WHERE brain_id = ?1 AND target_id = ?2",
            (brain.brain_id, node_id),
        )
    }
