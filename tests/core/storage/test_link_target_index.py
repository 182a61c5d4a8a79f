"""Schema 8: links indexed by their target with every key column. A schema 7 brain gains the
index on its first write (after its backup), reads the same neighbourhood before and after,
and from then on finds a node's incoming links in the index alone (no row read per link)."""

from __future__ import annotations

from pathlib import Path

import apsw

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.graph_view import rows
from memgui.core.storage import schema


def _linked_brain(path: Path) -> str:
    """A centre with links both ways (each kind), its neighbours linked on, a superseded one."""
    with Brain.open(path, actor="test") as brain:
        centre = brain.add("the centre").id
        ring = [brain.add(f"neighbour {k}").id for k in range(6)]
        for k, other in enumerate(ring):
            kind = ("relates_to", "caused_by", "supersedes")[k % 3]
            ends = (other, centre) if k % 2 else (centre, other)
            brain.link(*ends, kind)
            brain.link(other, brain.add(f"further {k}").id, "caused_by")
    return centre


def _as_schema_7(path: Path) -> None:
    conn = apsw.Connection(str(path))
    conn.execute(f"DROP INDEX {schema.LINK_TARGET_INDEX}")
    conn.execute(f"DROP TABLE {schema.STEMS_TABLE}")  # schema 9's, after this one
    conn.execute("UPDATE brain_meta SET value = '7' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


def _shape(found: graph_view.Neighbourhood) -> tuple[object, ...]:
    edges = sorted((e.key, e.source, e.target, e.kind, e.directed) for e in found.edges.values())
    nodes = sorted((n.id, n.degree, n.superseded) for n in found.nodes.values())
    return nodes, edges


def _incoming_plan(brain: Brain) -> str:
    sql = (
        "EXPLAIN QUERY PLAN SELECT j.value, l.from_id, l.to_id, l.kind FROM json_each(?2) j "
        f"CROSS JOIN memory_links l {rows._by_target(brain.db)} "
        "ON l.brain_id = ?1 AND l.to_id = j.value"
    )
    return str(brain.db.conn.execute(sql, (brain.brain_id, '["x"]')).fetchall())


def test_a_new_brain_has_the_covering_index(tmp_path: Path) -> None:
    with Brain.open(tmp_path / "new.sqlite", actor="test") as brain:
        assert brain.db.schema_version == schema.SCHEMA_VERSION >= 8
        assert schema.LINK_TARGET_INDEX in brain.db.indexes
        assert f"COVERING INDEX {schema.LINK_TARGET_INDEX}" in _incoming_plan(brain)


def test_a_schema_7_brain_gains_it_by_its_first_write_and_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "links.sqlite"
    centre = _linked_brain(path)
    _as_schema_7(path)
    with Brain.open(path, actor="test") as brain:
        assert brain.db.schema_version == 7 and not brain.db.is_current
        assert schema.LINK_TARGET_INDEX not in brain.db.indexes
        # Read as it is: the older index, each link's row read.
        assert "USING INDEX idx_memory_links_to" in _incoming_plan(brain)
        before = graph_view.neighbourhood(brain, centre, 2)
        plan = brain.pending_migration()
        assert plan is not None
        assert (plan.from_version, plan.to_version) == (7, schema.SCHEMA_VERSION)
        assert plan.changes[0] == (
            "links are indexed by the memory they point to with both their ends and kind, so "
            "the graph reads a memory's incoming links from the index alone"
        )
        brain.add("the first write migrates")
        assert brain.db.schema_version == schema.SCHEMA_VERSION and brain.db.is_current
        assert f"COVERING INDEX {schema.LINK_TARGET_INDEX}" in _incoming_plan(brain)
        after = graph_view.neighbourhood(brain, centre, 2)
    assert _shape(before) == _shape(after)
    assert len(after.edges) == 12 and any(n.superseded for n in after.nodes.values())
    assert list(path.parent.glob(f"{path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))
    conn = apsw.Connection(str(path))
    stored = conn.execute(
        "SELECT value FROM brain_meta WHERE key = ?", (schema.SCHEMA_KEY,)
    ).fetchall()
    conn.close()
    assert {v for (v,) in stored} == {str(schema.SCHEMA_VERSION)}


def test_a_file_without_meta_rows_reads_as_its_indexes_say(tmp_path: Path) -> None:
    """A file memgui made and never wrote has no meta row: its indexes say its schema."""
    path = tmp_path / "fresh.sqlite"
    with Brain.open(path, actor="test"):
        pass
    conn = apsw.Connection(str(path))
    conn.execute("DELETE FROM brain_meta")
    conn.close()
    with Brain.open(path, actor="test") as brain:
        assert brain.db.schema_version == 9
    conn = apsw.Connection(str(path))
    conn.execute(f"DROP TABLE {schema.STEMS_TABLE}")
    conn.close()
    with Brain.open(path, actor="test") as brain:
        assert brain.db.schema_version == 8
    conn = apsw.Connection(str(path))
    conn.execute(f"DROP INDEX {schema.LINK_TARGET_INDEX}")
    conn.close()
    with Brain.open(path, actor="test") as brain:
        assert brain.db.schema_version == 7
