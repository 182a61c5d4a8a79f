"""Each node's degree (its links and knowledge edges), kept by triggers (schema 4).

The graph's overview ranks every linked node of a brain by degree; counted from the link
and edge indexes each time, that is a `GROUP BY` of every index and a sort of their sums
(1.9 s at a million traces). `memgui_degrees` holds the sums, one row per node with at
least one link or edge, and an index in rank order: an overview's page is a seek.

Triggers keep it, so every writer does — memgui's code, a revert, a merge, and a program
that knows nothing of the table (AgentOS writes `knowledge_edges` itself). A link or edge
counts once at each end (a loop twice), as the indexes count it. `INSERT OR REPLACE`
deletes the row it replaces without firing a delete trigger (unless the writer turned
recursive triggers on), and AgentOS adds its edges so: a `BEFORE INSERT` trigger notes the
row an insert may replace in `memgui_degree_replaced`, and the `AFTER INSERT` trigger takes
that row's ends off before adding the new row's. An insert that is ignored, or becomes an
upsert's update, leaves its note behind; the next insert of that key clears it first.

The counts are trusted only while every one of these triggers is in the file (`is_kept`);
a write that finds one missing makes it again and counts all degrees again (`recount`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import apsw

TABLES = """
CREATE TABLE IF NOT EXISTS memgui_degrees (
  brain_id TEXT    NOT NULL,
  node_id  TEXT    NOT NULL,
  degree   INTEGER NOT NULL,
  PRIMARY KEY (brain_id, node_id)
);
CREATE INDEX IF NOT EXISTS idx_memgui_degrees_rank
  ON memgui_degrees (brain_id, degree DESC, node_id);
CREATE TABLE IF NOT EXISTS memgui_degree_replaced (
  brain_id  TEXT NOT NULL,
  source    TEXT NOT NULL,
  key       TEXT NOT NULL,
  end_a     TEXT NOT NULL,
  end_b     TEXT NOT NULL,
  PRIMARY KEY (brain_id, source, key)
);
"""

TABLE_NAMES = ("memgui_degrees", "memgui_degree_replaced")

# (table, its key as one text, the key's columns, its two ends) of each kind of edge counted
_SOURCES = {
    "links": (
        "memory_links",
        "json_array({r}.from_id, {r}.to_id, {r}.kind)",
        ("from_id", "to_id", "kind"),
        "from_id",
        "to_id",
    ),
    "edges": ("knowledge_edges", "{r}.id", ("id",), "source_id", "target_id"),
}

# No statement here may meet a conflict: a trigger's statements take the conflict policy of
# the statement that fired it (an INSERT OR IGNORE's, an INSERT OR REPLACE's).
_UP = """
  INSERT INTO memgui_degrees (brain_id, node_id, degree) SELECT {r}.brain_id, {r}.{end}, 0
  WHERE NOT EXISTS (SELECT 1 FROM memgui_degrees WHERE brain_id = {r}.brain_id
    AND node_id = {r}.{end});
  UPDATE memgui_degrees SET degree = degree + 1 WHERE brain_id = {r}.brain_id
    AND node_id = {r}.{end};"""
_DOWN = """
  UPDATE memgui_degrees SET degree = degree - 1 WHERE brain_id = {bid} AND node_id = {node};
  DELETE FROM memgui_degrees WHERE brain_id = {bid} AND node_id = {node} AND degree <= 0;"""


def _down(bid: str, node: str) -> str:
    return _DOWN.format(bid=bid, node=node)


def _triggers() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, (table, key, key_columns, end_a, end_b) in _SOURCES.items():
        new_key = key.format(r="new")
        same_row = " AND ".join(f"t.{c} = new.{c}" for c in key_columns)  # the primary key
        noted = (
            f"(SELECT {{col}} FROM memgui_degree_replaced WHERE brain_id = new.brain_id "
            f"AND source = '{name}' AND key = {new_key})"
        )
        out[f"memgui_degrees_{name}_note"] = f"""
CREATE TRIGGER IF NOT EXISTS memgui_degrees_{name}_note BEFORE INSERT ON {table}
BEGIN
  DELETE FROM memgui_degree_replaced WHERE brain_id = new.brain_id AND source = '{name}'
    AND key = {new_key};
  INSERT INTO memgui_degree_replaced (brain_id, source, key, end_a, end_b)
  SELECT t.brain_id, '{name}', {key.format(r="t")}, t.{end_a}, t.{end_b} FROM {table} t
  WHERE t.brain_id = new.brain_id AND {same_row};
END;
"""
        out[f"memgui_degrees_{name}_insert"] = f"""
CREATE TRIGGER IF NOT EXISTS memgui_degrees_{name}_insert AFTER INSERT ON {table}
BEGIN{_down("new.brain_id", noted.format(col="end_a"))}\
{_down("new.brain_id", noted.format(col="end_b"))}
  DELETE FROM memgui_degree_replaced WHERE brain_id = new.brain_id AND source = '{name}'
    AND key = {new_key};{_UP.format(r="new", end=end_a)}{_UP.format(r="new", end=end_b)}
END;
"""
        out[f"memgui_degrees_{name}_delete"] = f"""
CREATE TRIGGER IF NOT EXISTS memgui_degrees_{name}_delete AFTER DELETE ON {table}
BEGIN{_down("old.brain_id", f"old.{end_a}")}{_down("old.brain_id", f"old.{end_b}")}
END;
"""
        out[f"memgui_degrees_{name}_update"] = f"""
CREATE TRIGGER IF NOT EXISTS memgui_degrees_{name}_update
AFTER UPDATE OF brain_id, {end_a}, {end_b} ON {table}
WHEN old.brain_id IS NOT new.brain_id OR old.{end_a} IS NOT new.{end_a}
  OR old.{end_b} IS NOT new.{end_b}
BEGIN{_down("old.brain_id", f"old.{end_a}")}{_down("old.brain_id", f"old.{end_b}")}\
{_UP.format(r="new", end=end_a)}{_UP.format(r="new", end=end_b)}
END;
"""
    return out


TRIGGER_SQL = _triggers()
TRIGGER_NAMES = tuple(TRIGGER_SQL)

_COUNTS = """
SELECT brain_id, from_id, count(*) FROM memory_links GROUP BY brain_id, from_id
UNION ALL SELECT brain_id, to_id, count(*) FROM memory_links GROUP BY brain_id, to_id
UNION ALL SELECT brain_id, source_id, count(*) FROM knowledge_edges GROUP BY brain_id, source_id
UNION ALL SELECT brain_id, target_id, count(*) FROM knowledge_edges GROUP BY brain_id, target_id
"""


def recount(conn: apsw.Connection) -> None:
    """Count every node's degree again from the link and edge indexes (inside the caller's
    transaction): the table's first filling, and its repair."""
    conn.execute("DELETE FROM memgui_degrees; DELETE FROM memgui_degree_replaced")
    conn.execute(
        f"WITH c(brain_id, node_id, n) AS ({_COUNTS}) "
        "INSERT INTO memgui_degrees (brain_id, node_id, degree) "
        "SELECT brain_id, node_id, sum(n) FROM c GROUP BY brain_id, node_id"
    )


def install(conn: apsw.Connection) -> None:
    """The table, its counts and its triggers (inside the caller's transaction)."""
    conn.execute(TABLES)
    recount(conn)
    for sql in TRIGGER_SQL.values():
        conn.execute(sql)


def is_kept(tables: set[str], triggers: set[str]) -> bool:
    """Whether a file's degrees can be read as they are: the table and every trigger."""
    return "memgui_degrees" in tables and set(TRIGGER_NAMES) <= triggers
