"""Each node's degree (its links and knowledge edges) kept in a PostgreSQL database (layout 8),
as a file keeps it (`storage/degrees.py`).

The graph's overview ranks every linked node of a brain by degree; counted from the four end
indexes at each call, that is four `GROUP BY`s and a sort of their sums. `memgui_degrees`
holds the sums, one row per brain and node with at least one link or edge, with an index in
rank order: an overview's page is a seek.

Statement-level triggers with transition tables keep it, so every writer does — memgui, a
revert, a merge, AgentOS writing `knowledge_edges` itself: once per statement, the net change
of each end (an end counts once per link or edge, a loop twice, as the indexes count it), so
an update that moves no end (a weight, metadata) changes nothing. An upsert
(`INSERT … ON CONFLICT DO UPDATE`, as AgentOS writes edges) fires the insert trigger with the
rows it inserted and the update trigger with those it updated. The ends are upserted in key
order, so two writers touching the same nodes wait for each other instead of deadlocking.
A TRUNCATE is not counted (no program of the layout truncates these tables).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

# (table, its two ends) of each kind of edge counted
_SOURCES = {
    "links": ("memory_links", "from_id", "to_id"),
    "edges": ("knowledge_edges", "source_id", "target_id"),
}

TABLE = """
CREATE TABLE IF NOT EXISTS memgui_degrees (
  brain_id TEXT   NOT NULL,
  node_id  TEXT   NOT NULL,
  degree   BIGINT NOT NULL,
  PRIMARY KEY (brain_id, node_id)
);
CREATE INDEX IF NOT EXISTS idx_memgui_degrees_rank
  ON memgui_degrees (brain_id, degree DESC, node_id COLLATE "C");
"""


def _ends(rows: str, sign: int, end_a: str, end_b: str) -> str:
    return (
        f"SELECT brain_id, {end_a} AS node_id, {sign} AS n FROM {rows} UNION ALL "
        f"SELECT brain_id, {end_b}, {sign} FROM {rows}"
    )


def _function(name: str, table: str, op: str, end_a: str, end_b: str) -> str:
    parts = []
    if op in ("INSERT", "UPDATE"):
        parts.append(_ends("new_rows", 1, end_a, end_b))
    if op in ("DELETE", "UPDATE"):
        parts.append(_ends("old_rows", -1, end_a, end_b))
    delta = (
        f"SELECT brain_id, node_id, sum(n) AS n FROM ({' UNION ALL '.join(parts)}) d "
        "GROUP BY brain_id, node_id HAVING sum(n) <> 0"
    )
    prune = (
        ""
        if op == "INSERT"  # an insert only adds: no degree falls to zero
        else f"""
  DELETE FROM memgui_degrees g USING ({delta}) c
  WHERE g.brain_id = c.brain_id AND g.node_id = c.node_id AND g.degree <= 0;"""
    )
    return f"""
CREATE OR REPLACE FUNCTION memgui_degrees_{name}_{op.lower()}() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO memgui_degrees AS g (brain_id, node_id, degree)
  SELECT brain_id, node_id, n FROM ({delta}) c ORDER BY brain_id, node_id
  ON CONFLICT (brain_id, node_id) DO UPDATE SET degree = g.degree + excluded.degree;{prune}
  RETURN NULL;
END $$;
CREATE OR REPLACE TRIGGER memgui_degrees_{name}_{op.lower()} AFTER {op} ON {table}
REFERENCING {_transitions(op)} FOR EACH STATEMENT
EXECUTE FUNCTION memgui_degrees_{name}_{op.lower()}();
"""


def _transitions(op: str) -> str:
    return {
        "INSERT": "NEW TABLE AS new_rows",
        "DELETE": "OLD TABLE AS old_rows",
        "UPDATE": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    }[op]


TRIGGERS = {
    f"memgui_degrees_{name}_{op.lower()}": _function(name, table, op, end_a, end_b)
    for name, (table, end_a, end_b) in _SOURCES.items()
    for op in ("INSERT", "DELETE", "UPDATE")
}

_COUNTS = " UNION ALL ".join(
    f"SELECT brain_id, {end}, count(*) FROM {table} GROUP BY brain_id, {end}"
    for table, end_a, end_b in _SOURCES.values()
    for end in (end_a, end_b)
)
RECOUNT = f"""
DELETE FROM memgui_degrees;
INSERT INTO memgui_degrees (brain_id, node_id, degree)
SELECT brain_id, node_id, sum(n) FROM ({_COUNTS}) c(brain_id, node_id, n)
GROUP BY brain_id, node_id;
"""


def install(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """The table, its triggers and its counts (inside the caller's transaction). The
    triggers come first: making one locks its table against writers until the transaction
    ends, so the counts taken after miss no write."""
    conn.execute(TABLE)
    for sql in TRIGGERS.values():
        conn.execute(sql)
    conn.execute(RECOUNT)


def installed(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
    """Whether the counts can be read as they are: the table and every trigger."""
    row = conn.execute(
        "SELECT to_regclass('memgui_degrees') IS NOT NULL AND "
        "(SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'memgui\\_degrees\\_%%' "
        "AND NOT tgisinternal) = %s",
        (len(TRIGGERS),),
    ).fetchone()
    return bool(row and row[0])
