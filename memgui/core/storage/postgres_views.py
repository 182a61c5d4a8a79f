"""The SQL of `shared_brain_views`: a view's ids in order, and the filter lists' counts; and
the ORDER BY of a shared brain's listings (`order_sql`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.storage import reads

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


def order_sql(order: str, descending: bool) -> str:
    """The ORDER BY of `order` (a column of `reads.ORDER_COLUMNS`), ties broken by id."""
    if not isinstance(order, str) or order not in reads.ORDER_COLUMNS:
        raise InvalidArgument(
            "order", f"must be one of {', '.join(reads.ORDER_COLUMNS)} (got {order!r})", order
        )
    # SQLite sorts NULL lowest; Postgres highest unless told. A column that holds no NULL
    # is left without the NULLS clause: an index (brain_id, created_at) then serves the
    # newest page at once (with it, Postgres sorted every trace: 35 ms at 100k).
    nulls = "" if order in _NOT_NULL else (" NULLS LAST" if descending else " NULLS FIRST")
    direction = "DESC" if descending else "ASC"
    column = _TITLE_ORDER if order == "title" else order
    return f"{column} {direction}{nulls}, id {direction}"


_NOT_NULL = frozenset(
    {"created_at", "retrieval_count", "strength", "type", "scope", "scope_id", "version"}
    | {"embedding_status", "content", "tags", "id"}
)
# The title as SQLite's listing sorts it (`reads.TITLE_ORDER`): metadata's text title, else
# the content without its leading blanks, case folded.
_TITLE_ORDER = (
    "lower(coalesce(CASE WHEN metadata IS JSON OBJECT AND "
    "jsonb_typeof(metadata::jsonb -> 'title') = 'string' THEN metadata::jsonb ->> 'title' END, "
    "ltrim(content, E' \\t\\n\\r')))"
)
