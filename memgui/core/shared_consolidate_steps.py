"""Strengthen and derive on a shared brain: what they read from and write to PostgreSQL.

The rules are the file's (`consolidate_steps.strengthen_from`, `consolidate_derive.wanted`
and `ask`, `consolidate_apply`): the same candidates from the same rows, the same rows
written, journaled as on a file (nodes, edges, the insight's `add`), so a revert of the run's
batch takes them back. Nothing here opens a transaction: the caller's run holds it, with the
brain id's advisory lock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import consolidate_steps, traces
from memgui.core.consolidate_derive import edge_weight
from memgui.core.consolidate_plan import (
    INSIGHT_STRENGTH,
    DeriveCandidate,
    StrengthenCandidate,
)
from memgui.core.storage import postgres, postgres_graph, store

if TYPE_CHECKING:
    import psycopg

    from memgui.core.consolidate_apply import ConsolidationResult
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.transaction import WriteBatch

    Conn = psycopg.Connection[tuple[Any, ...]]

Snap = dict[str, Any]
EdgeValue = tuple[float, dict[str, Any]]


# --- reading ------------------------------------------------------------------------------


def strengthen(
    conn: Conn, brain_id: str, live: dict[str, tuple[int, Snap]], skip: set[str]
) -> tuple[list[StrengthenCandidate], dict[str, EdgeValue | None]]:
    """`consolidate_steps.strengthen` on PostgreSQL: AgentOS's `used` feedback rows."""
    rows = conn.execute(
        "SELECT id, trace_id, query FROM retrieval_feedback WHERE brain_id = %s "
        "AND signal = 'used' AND query IS NOT NULL ORDER BY id",
        (brain_id,),
    ).fetchall()
    return consolidate_steps.strengthen_from(
        rows, live, skip, lambda eid: co_activation_edge(conn, brain_id, eid)
    )


def co_activation_edge(conn: Conn, brain_id: str, eid: str) -> EdgeValue | None:
    """A CO_ACTIVATED edge's (weight, metadata), or None when there is none."""
    row = conn.execute(
        "SELECT weight, metadata FROM knowledge_edges WHERE brain_id = %s AND id = %s "
        "AND type = 'CO_ACTIVATED'",
        (brain_id, eid),
    ).fetchone()
    return consolidate_steps.edge_value(row)


def associations(conn: Conn, brain_id: str) -> list[tuple[str, str, float]]:
    """Every memory-graph edge and link of the brain (`consolidate_derive.file_edges`)."""
    found = [
        (str(a), str(b), edge_weight(w))
        for a, b, w in conn.execute(
            "SELECT source_id, target_id, weight FROM knowledge_edges WHERE brain_id = %s",
            (brain_id,),
        )
    ]
    found += [
        (str(a), str(b), 1.0)
        for a, b in conn.execute(
            "SELECT from_id, to_id FROM memory_links WHERE brain_id = %s", (brain_id,)
        )
    ]
    return found


# --- writing ------------------------------------------------------------------------------


def write_strengthen(brain: SharedBrain, batch: WriteBatch, candidate: StrengthenCandidate) -> None:
    """Each pair's CO_ACTIVATED edge grows by the learning rate (made at it when missing),
    with the memory-graph nodes of its traces (`consolidate_apply._strengthen`)."""
    conn, bid, now = brain.conn, brain.brain_id, brain.now()
    for trace_id in candidate.trace_ids:
        if postgres_graph.node_exists(conn, bid, trace_id):
            continue
        row = postgres.fetch_row(conn, bid, trace_id)
        assert row is not None  # locked live by the run (`_current`)
        node = consolidate_steps.memory_graph_node(trace_id, store.row_to_snapshot(row), now)
        postgres_graph.insert_row(conn, batch, bid, "node", node)
    for pair in candidate.pairs:
        current = co_activation_edge(conn, bid, pair.edge_id)
        key = candidate.query_key
        before, after = consolidate_steps.co_activation_rows(pair, key, current, now)
        if before is None:
            postgres_graph.insert_row(conn, batch, bid, "edge", after)
        else:
            postgres_graph.update_row(conn, batch, bid, "edge", before, after)


def write_derive(
    brain: SharedBrain,
    batch: WriteBatch,
    candidate: DeriveCandidate,
    members: list[Snap],
    n: int,
) -> str:
    """The insight as a semantic trace (`consolidate_apply._derive`): `insight_<ms>_<n>`,
    strength 0.7, tags derived and insight, filed where its cluster is when all of it is in
    one scope (`members`: its live traces). Its id."""
    places = {(s["scope"], s["scope_id"]) for s in members}
    scope, scope_id = places.pop() if len(places) == 1 else ("user", "")
    now = brain.now()
    snap = traces.new_snapshot(
        now,
        candidate.insight,
        type="semantic",
        scope=scope,
        scope_id=scope_id,
        tags=["derived", "insight"],
        strength=INSIGHT_STRENGTH,
        id=f"insight_{now}_{n}",
        metadata={
            "sourceCluster": candidate.centroid_id,
            "derivedFrom": sorted(candidate.member_ids),
            "derivedBy": candidate.model,
        },
    )
    postgres.insert_trace(brain.conn, batch, brain.brain_id, snap)
    return str(snap["id"])


def log(brain: SharedBrain, result: ConsolidationResult) -> None:
    """The run's row in AgentOS's `consolidation_log`, as a file's run logs it."""
    counts = result.seed_counts()
    brain.conn.execute(
        "INSERT INTO consolidation_log (brain_id, ran_at, pruned, merged, derived, compacted, "
        "duration_ms) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (
            brain.brain_id,
            brain.now(),
            counts["pruned"],
            counts["merged"],
            counts["derived"],
            counts["compacted"],
            result.duration_ms,
        ),
    )
