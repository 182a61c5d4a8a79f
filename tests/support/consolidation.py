"""Brains to consolidate: traces made in the past, agents' retrieval feedback, linked clusters."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.model import DAY_MS

NOW = 1_800_000_000_000  # a fixed "now" (2027-01-15), so strengths and ages are exact


def at(brain: Brain, ms: int) -> None:
    """Set the brain's clock to `ms` (epoch milliseconds)."""
    brain.clock = lambda: ms


def add_aged(brain: Brain, content: str, days_ago: float, **fields) -> str:
    """A trace made `days_ago` days before NOW (never recalled since)."""
    at(brain, NOW - int(days_ago * DAY_MS))
    try:
        return brain.add(content, **fields).id
    finally:
        at(brain, NOW)


def set_retrievals(brain: Brain, trace_id: str, count: int) -> None:
    """What AgentOS's recalls leave: a retrieval count, not an edit (no version bump)."""
    with brain.db.lock:
        brain.db.conn.execute(
            "UPDATE memory_traces SET retrieval_count = ? WHERE id = ?", (count, trace_id)
        )


def add_feedback(brain: Brain, query: str, trace_ids: list[str], signal: str = "used") -> None:
    """AgentOS's `feedback(id, 'used', query)` rows, as AgentOS writes them."""
    with brain.db.lock:
        conn = brain.db.conn
        for trace_id in trace_ids:
            conn.execute(
                "INSERT INTO retrieval_feedback (brain_id, trace_id, signal, query, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (brain.brain_id, trace_id, signal, query, NOW),
            )


def linked_cluster(brain: Brain, contents: list[str], **fields) -> list[str]:
    """Fresh traces linked in a chain (relates_to): one cluster for the derive step."""
    ids = [brain.add(c, **fields).id for c in contents]
    for a, b in zip(ids, ids[1:], strict=False):
        brain.link(a, b, "relates_to")
    return ids
