"""What a merge moves to the memory that survives it: the absorbed memories' links to other
memories and their knowledge-graph edges.

Each is moved, not copied: the absorbed memory's link or edge goes (journaled as removed)
and the survivor's is written (journaled as added, or as the edge's new end), so the
survivor holds the union of their neighbours and a revert of the merge puts every row back
as it was. A link or edge the survivor has already is not written twice, and one between
the merged memories themselves (which would join the survivor to itself) only goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.storage import journal_rows

if TYPE_CHECKING:
    from memgui.core.brain_write import BrainContext
    from memgui.core.storage.db import WriteBatch

MEMORY_GRAPH = "memory_graph"


def memory_graph_node(trace: dict[str, Any], now: int) -> dict[str, Any]:
    """The node standing for a trace in the knowledge graph, as AgentOS names it."""
    return {
        "id": trace["id"],
        "type": MEMORY_GRAPH,
        "label": trace["id"],
        "properties": {
            "trace_id": trace["id"],
            "type": trace["type"],
            "scope": trace["scope"],
            "scopeId": trace["scope_id"],
            "strength": trace["strength"],
            "createdAt": trace["created_at"],
        },
        "confidence": 1.0,
        "source": {"type": "import"},
        "created_at": now,
    }


def _nodes_of(brain: BrainContext, trace_ids: list[str]) -> set[str]:
    """The ids that stand for these traces in the graph: each trace's own id (AgentOS's
    memory-graph node, or an edge naming the trace itself) and every node whose
    `properties.trace_id` names one of them."""
    marks = ",".join("?" * len(trace_ids))
    rows = brain.db.conn.execute(
        f"SELECT id FROM knowledge_nodes WHERE brain_id = ? AND json_valid(properties) AND "
        f"json_extract(properties, '$.trace_id') IN ({marks})",
        (brain.brain_id, *trace_ids),
    ).fetchall()
    return set(trace_ids) | {str(r[0]) for r in rows}


def _node_exists(brain: BrainContext, node_id: str) -> bool:
    row = brain.db.conn.execute(
        "SELECT 1 FROM knowledge_nodes WHERE brain_id = ? AND id = ?", (brain.brain_id, node_id)
    ).fetchone()
    return row is not None


def move_edges(
    brain: BrainContext, batch: WriteBatch, merged: list[str], survivor: dict[str, Any]
) -> None:
    """Give the survivor the knowledge-graph edges of the `merged` traces (see the module)."""
    if not {"knowledge_edges", "knowledge_nodes"} <= brain.db.tables:
        return
    conn, bid, db = brain.db.conn, brain.brain_id, brain.db
    gone = _nodes_of(brain, merged)
    kept = _nodes_of(brain, [survivor["id"]])
    marks = ",".join("?" * len(gone))
    edges = conn.execute(
        f"SELECT id, source_id, target_id, type FROM knowledge_edges WHERE brain_id = ? AND "
        f"(source_id IN ({marks}) OR target_id IN ({marks})) ORDER BY created_at, id",
        (bid, *gone, *gone),
    ).fetchall()
    if not edges:
        return
    # The survivor's node: its own memory-graph node, else one naming it, else made now.
    node = survivor["id"]
    if not _node_exists(brain, node):
        named = sorted(kept - {node})
        node = next((n for n in named if _node_exists(brain, n)), node)
        if node == survivor["id"]:
            made = memory_graph_node(survivor, brain.now())
            journal_rows.insert_row(db, batch, bid, "node", made)
    ours = kept | {node}
    for edge_id, source, target, kind in edges:
        new_source = node if source in gone else source
        new_target = node if target in gone else target
        twin = conn.execute(
            "SELECT 1 FROM knowledge_edges WHERE brain_id = ? AND source_id = ? AND "
            "target_id = ? AND type = ? AND id != ?",
            (bid, new_source, new_target, kind, edge_id),
        ).fetchone()
        if (new_source in ours and new_target in ours) or twin is not None:
            journal_rows.delete_rows(db, batch, bid, "edge", "id = ?2", (edge_id,))
            continue
        journal_rows.update_row(
            db,
            batch,
            bid,
            "edge",
            {"id": edge_id, "source_id": source, "target_id": target},
            {"id": edge_id, "source_id": new_source, "target_id": new_target},
        )
