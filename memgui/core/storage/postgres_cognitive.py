"""The SQL of the cognitive search's graph leg on PostgreSQL (`core/shared_cognitive.py`):
the nodes a query names, a wave of nodes' neighbours over knowledge edges and memory links
in one statement each, and nodes' labels. Memory-graph nodes (`type = 'memory_graph'`) are
left out, as on a file (`search/cognitive.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg


def named_nodes(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, phrases: list[str]
) -> list[str]:
    """The ids of the nodes whose label, lower-cased, is one of `phrases`."""
    rows = conn.execute(
        "SELECT id FROM knowledge_nodes WHERE brain_id = %s AND type != 'memory_graph' "
        "AND lower(label) = ANY(%s)",
        (brain_id, phrases),
    ).fetchall()
    return [str(node) for (node,) in rows]


def neighbours_of(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, wave: list[str]
) -> dict[str, list[tuple[str, float]]]:
    """Each node's neighbours both ways with the edge's weight (a link weighs 1)."""
    found: dict[str, list[tuple[str, float]]] = {}
    wanted = set(wave)
    edges = conn.execute(
        "SELECT source_id, target_id, weight FROM knowledge_edges WHERE brain_id = %s "
        "AND (source_id = ANY(%s) OR target_id = ANY(%s))",
        (brain_id, wave, wave),
    ).fetchall()
    links = conn.execute(
        "SELECT from_id, to_id, 1.0::float8 FROM memory_links WHERE brain_id = %s "
        "AND (from_id = ANY(%s) OR to_id = ANY(%s))",
        (brain_id, wave, wave),
    ).fetchall()
    for one, other, weight in [*edges, *links]:
        value = float(weight) if isinstance(weight, int | float) else 1.0
        if one in wanted:
            found.setdefault(one, []).append((other, value))
        if other in wanted and other != one:
            found.setdefault(other, []).append((one, value))
    return found


def labels_of(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, nodes: list[str]
) -> dict[str, str]:
    rows = conn.execute(
        "SELECT id, label FROM knowledge_nodes WHERE brain_id = %s AND id = ANY(%s) "
        "AND type != 'memory_graph'",
        (brain_id, nodes),
    ).fetchall()
    return {str(node): str(label) for node, label in rows}
