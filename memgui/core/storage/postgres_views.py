"""The SQL of `shared_brain_views`: a view's ids in order, and the filter lists' counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

_TAGS = "(CASE WHEN tags IS JSON ARRAY THEN tags::jsonb ELSE '[]' END)"


def listed_ids(
    conn: psycopg.Connection[tuple[Any, ...]], where: tuple[str, list[Any]], order_by: str
) -> list[str]:
    sql, params = where
    rows = conn.execute(
        f"SELECT id FROM memory_traces WHERE {sql} ORDER BY {order_by}", params
    ).fetchall()
    return [r[0] for r in rows]


def id_slices(
    conn: psycopg.Connection[tuple[Any, ...]],
    where: tuple[str, list[Any]],
    order_by: str,
    size: int,
) -> Iterator[list[str]]:
    """All the ids in one round trip (100k ids are a few MB), handed out `size` at a time."""
    ids = listed_ids(conn, where, order_by)
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def facet_counts(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, deleted: bool, tag_limit: int
) -> tuple[list[tuple[str, str, str | None, int]], list[tuple[str, int]]]:
    """(type, scope, category, count) groups, and the most used tags with their counts."""
    state = "deleted != 0" if deleted else "deleted = 0"
    groups = conn.execute(
        "SELECT type, scope, category, count(*) FROM memory_traces "
        f"WHERE brain_id = %s AND {state} GROUP BY type, scope, category",
        (brain_id,),
    ).fetchall()
    tags = conn.execute(
        f"SELECT tag, count(*) AS n FROM memory_traces, jsonb_array_elements_text({_TAGS}) "
        f"AS tag WHERE brain_id = %s AND {state} GROUP BY tag ORDER BY n DESC, tag LIMIT %s",
        (brain_id, tag_limit),
    ).fetchall()
    return (
        [(str(t), str(s), c, int(n)) for t, s, c, n in groups],
        [(str(tag), int(n)) for tag, n in tags],
    )
