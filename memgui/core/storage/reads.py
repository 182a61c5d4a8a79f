"""Reading traces many at a time: listings, id lists, counts, the rows of given ids.

The facade (`Brain`) checks its arguments, holds the connection's lock and makes `Trace`s of
the rows; the SQL is here, beside `store`, which reads and writes one trace at a time. Like
`store`, nothing here takes the lock: the caller holds it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.model import TraceFilter
from memgui.core.search.filters import filter_sql
from memgui.core.storage import schema, store
from memgui.core.storage.db import Database

# The sort keys of a listing: each is the column of that name, but `title`: what names the
# memory (its `metadata.title`, else its text), case folded as SQLite folds ASCII.
ORDER_COLUMNS = (
    "title",
    "created_at",
    "last_accessed",
    "retrieval_count",
    "strength",
    "type",
    "scope",
    "scope_id",
    "category",
    "expires_at",
    "version",
    "embedding_status",
    "content",
    "tags",
    "id",
)
TITLE_ORDER = (
    f"coalesce({schema.TITLE_SQL.format(m='metadata')}, ltrim(content, ' ' || char(9, 10, 13)))"
    " COLLATE NOCASE"
)
IDS_PER_QUERY = 500
SEPARATOR = "\x1f"  # joins the ids of `joined_ids`; char(31) in SQL


def order_sql(db: Database, order: str, descending: bool) -> str:
    """The ORDER BY of a listing sorted by `order`, ties broken by id in the same direction.
    A column an older brain lacks sorts by creation instead."""
    if not isinstance(order, str) or order not in ORDER_COLUMNS:  # a list is unhashable
        raise InvalidArgument(
            "order", f"must be one of {', '.join(ORDER_COLUMNS)} (got {order!r})", order
        )
    column = order if order == "id" or order in db.trace_columns else "created_at"
    if order == "title":
        column = TITLE_ORDER
    direction = "DESC" if descending else "ASC"
    return f"{column} {direction}, id {direction}"


def where_sql(db: Database, brain_id: str, flt: TraceFilter) -> tuple[str, list[Any]]:
    return filter_sql(db, brain_id, flt, alias="")


def after_where(
    where: tuple[str, list[Any]], after: tuple[int, str], descending: bool
) -> tuple[str, list[Any]]:
    """`where` narrowed to the traces past `after` = (created_at, id) in that order."""
    clause, params = where
    op = "<" if descending else ">"
    return f"{clause} AND (created_at, id) {op} (?, ?)", [*params, *after]


def rows_of_ids(db: Database, brain_id: str, ids: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    """The rows of the traces `ids` names (unknown ids are simply absent), a few queries."""
    columns = store.select_columns(db)
    for start in range(0, len(ids), IDS_PER_QUERY):
        chunk = ids[start : start + IDS_PER_QUERY]
        marks = ",".join("?" * len(chunk))
        yield from db.conn.execute(
            f"SELECT {columns} FROM memory_traces WHERE brain_id = ? AND id IN ({marks})",
            (brain_id, *chunk),
        )


def listed_rows(
    db: Database, where: tuple[str, list[Any]], order: str, limit: int | None, offset: int
) -> list[tuple[Any, ...]]:
    sql, params = where
    return db.conn.execute(
        f"SELECT {store.select_columns(db)} FROM memory_traces WHERE {sql} "
        f"ORDER BY {order} LIMIT ? OFFSET ?",
        (*params, limit or -1, offset),
    ).fetchall()


def listed_ids(db: Database, where: tuple[str, list[Any]], order: str) -> list[str]:
    sql, params = where
    return [
        r[0]
        for r in db.conn.execute(
            f"SELECT id FROM memory_traces WHERE {sql} ORDER BY {order}", params
        )
    ]


def joined_ids(db: Database, where: tuple[str, list[Any]], order: str) -> tuple[int, int, str]:
    """(count, how many ids hold the separator, every id in order joined by it).

    SQLite joins all the ids into one text in a single call, which runs without the GIL
    (building 1M ids one Python row at a time held it for ~0.8 s in 1M short bursts, and a
    GUI thread waited for each).
    """
    sql, params = where
    return db.conn.execute(
        f"SELECT count(*), coalesce(sum(instr(id, char(31)) > 0), 0), "
        f"group_concat(id, char(31) ORDER BY {order}) FROM memory_traces WHERE {sql}",
        params,
    ).get


def split_ids(text: str, count: int, size: int) -> Iterator[list[str]]:
    """The ids of `joined_ids`' text as lists of at most about `size` ids, one at a time."""
    step = max(1, len(text) * size // count)
    start = 0
    while start <= len(text):
        end = text.find(SEPARATOR, start + step)
        end = len(text) if end < 0 else end
        yield text[start:end].split(SEPARATOR)
        start = end + 1


def count(db: Database, where: tuple[str, list[Any]]) -> int:
    sql, params = where
    return db.conn.execute(f"SELECT count(*) FROM memory_traces WHERE {sql}", params).get


def embedding_blob(db: Database, brain_id: str, trace_id: str) -> Any:
    return db.conn.execute(
        "SELECT embedding FROM memory_traces WHERE brain_id = ? AND id = ?", (brain_id, trace_id)
    ).get


def trace_counts(db: Database, brain_id: str) -> tuple[int, int]:
    """(traces, forgotten traces) of the brain; none in a file without the table yet."""
    if "memory_traces" not in db.tables:
        return 0, 0
    return db.conn.execute(
        "SELECT count(*), coalesce(sum(deleted != 0), 0) FROM memory_traces WHERE brain_id = ?",
        (brain_id,),
    ).get


def facet_counts(
    db: Database, brain_id: str, deleted: bool, tag_limit: int
) -> tuple[list[tuple[Any, ...]], list[tuple[str, int]]]:
    """The live (or trashed) traces counted by (type, scope, category) in one pass, and
    their `tag_limit` most used tags with counts (a file without the table has none)."""
    if "memory_traces" not in db.tables:
        return [], []
    flag = 1 if deleted else 0
    # An AgentOS brain memgui has not migrated yet has no category column.
    category = "category" if "category" in db.trace_columns else "NULL"
    groups = list(
        db.conn.execute(
            f"SELECT type, scope, {category}, count(*) FROM memory_traces "
            "WHERE brain_id = ? AND (deleted != 0) = ? GROUP BY 1, 2, 3",
            (brain_id, flag),
        )
    )
    tags = db.conn.execute(
        "SELECT j.value, count(*) FROM memory_traces t, json_each(t.tags) j "
        "WHERE t.brain_id = ? AND (t.deleted != 0) = ? AND json_valid(t.tags) "
        "AND j.type = 'text' GROUP BY j.value ORDER BY count(*) DESC, j.value LIMIT ?",
        (brain_id, flag, tag_limit),
    )
    return groups, [(str(tag), int(n)) for tag, n in tags]
