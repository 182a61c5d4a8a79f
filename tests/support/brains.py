"""A small brain the app tests open: five memories of every type and scope, and fillers."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.model import Trace

SAMPLE = [
    ("The build uses Python 3.11", "semantic", "user", "u1", "DECISION", ["build"]),
    (
        "Deploys run on Fridays\nafter the freeze",
        "procedural",
        "organization",
        "acme",
        None,
        ["deploy", "ops"],
    ),
    ("Alice prefers dark mode", "semantic", "user", "alice", None, ["ui"]),
    ("Call Bob about the invoice", "prospective", "user", "u1", "TODO", []),
    ("The cache key includes the locale", "semantic", "thread", "t9", "PATTERN", ["cache"]),
]


def fill(brain: Brain, extra: int = 0) -> list[str]:
    ids = []
    for content, type_, scope, scope_id, category, tags in SAMPLE:
        trace = brain.add(
            content, type=type_, scope=scope, scope_id=scope_id, category=category, tags=tags
        )
        ids.append(trace.id)
    for n in range(extra):
        ids.append(brain.add(f"Filler memory number {n}", tags=["filler"]).id)
    return ids


def agentos_index_ids(brain: Brain, query: str) -> set[str]:
    """The live traces AgentOS's own index (`porter ascii`, external content) matches, read
    directly: what AgentOS's search would find."""
    rows = brain.db.conn.execute(
        "SELECT t.id FROM memory_traces_fts f JOIN memory_traces t ON t.rowid = f.rowid "
        "WHERE memory_traces_fts MATCH ? AND t.deleted = 0",
        (query,),
    ).fetchall()
    return {r[0] for r in rows}


def mentioning(brain: Brain, concept: str, traces: list[Trace]) -> str:
    """A knowledge-graph entity `concept` that each of `traces` mentions through a memory
    node of its own (labelled by its text's start); returns the entity's node id."""
    entity = brain.add_node(concept, "entity").id
    for trace in traces:
        node = brain.add_node(trace.content[:20], "memory", {"trace_id": trace.id}).id
        brain.add_edge(node, entity, "mentions")
    return entity
