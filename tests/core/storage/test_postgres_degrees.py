"""Kept degrees on a real PostgreSQL server (layout 8, `storage/postgres_degrees.py`): after
every kind of write — memgui's links, edges, merges, purges, reverts and copies in, AgentOS's
own inserts, upserts and deletes, several brains side by side, two writers at once — each
node's row in `memgui_degrees` is what the four end indexes count; a database of layout 7
gets the table, its counts and its triggers on open; the overview reads them."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.engines import copy_brain
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres, postgres_degrees
from memgui.core.storage.engine import parse_postgres_address

pytestmark = pytest.mark.slow  # a real server

Conn = psycopg.Connection[tuple[object, ...]]

_TRUTH = """
SELECT brain_id, node_id, sum(n)::bigint FROM (
  SELECT brain_id, from_id AS node_id, count(*) AS n FROM memory_links GROUP BY 1, 2
  UNION ALL SELECT brain_id, to_id, count(*) FROM memory_links GROUP BY 1, 2
  UNION ALL SELECT brain_id, source_id, count(*) FROM knowledge_edges GROUP BY 1, 2
  UNION ALL SELECT brain_id, target_id, count(*) FROM knowledge_edges GROUP BY 1, 2) c
GROUP BY 1, 2
"""


def kept(conn: Conn) -> dict[tuple[str, str], int]:
    rows = conn.execute("SELECT brain_id, node_id, degree FROM memgui_degrees").fetchall()
    return {(str(b), str(n)): int(d) for b, n, d in rows}  # type: ignore[call-overload]


def counted(conn: Conn) -> dict[tuple[str, str], int]:
    return {(str(b), str(n)): int(d) for b, n, d in conn.execute(_TRUTH).fetchall()}  # type: ignore[call-overload]


def assert_right(conn: Conn) -> dict[tuple[str, str], int]:
    truth = counted(conn)
    assert kept(conn) == truth
    return truth


def agentos_edge(conn: Conn, brain: str, edge: str, source: str, target: str) -> None:
    """An edge as AgentOS's Postgres adapter writes one: nodes made if missing, the edge
    upserted on its id (a second write with other ends moves it)."""
    with conn.transaction():
        for node in sorted({source, target}):  # (nodes in one order: no deadlock of the test's)
            conn.execute(
                "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
                "VALUES (%s, %s, 'concept', %s, 1) ON CONFLICT DO NOTHING",
                (brain, node, node),
            )
        conn.execute(
            "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, weight, "
            "created_at) VALUES (%s, %s, %s, %s, 'mentions', 0.5, 1) "
            "ON CONFLICT (brain_id, id) DO UPDATE SET source_id = excluded.source_id, "
            "target_id = excluded.target_id, weight = excluded.weight",
            (brain, edge, source, target),
        )


def test_degrees_stay_right_under_every_kind_of_write(pg_address: str) -> None:
    address = parse_postgres_address(pg_address)
    with SharedBrain.open(pg_address, actor="test") as brain:
        a, b, c, d = (brain.add(f"memory {n}").id for n in "abcd")
        brain.link(a, b, "relates_to")
        brain.link(b, a, "caused_by")
        brain.link(a, c, "caused_by")
        hub, spoke = (brain.add_node(n, "concept").id for n in ("hub", "spoke"))
        brain.add_edge(spoke, hub, "mentions")
        brain.add_edge(hub, hub, "mentions")  # a loop counts twice, as the indexes count it
        truth = assert_right(brain.conn)
        assert truth[("team", a)] == 3 and truth[("team", hub)] == 3
        undone = brain.unlink(a, c, "caused_by")
        assert_right(brain.conn)
        brain.revert(undone.batch_id)
        assert kept(brain.conn)[("team", c)] == 1
        merged = brain.merge([b, d], keep=d)  # b's links and edges move to d
        assert ("team", b) not in assert_right(brain.conn)
        brain.revert(merged.changes.batch_id)  # type: ignore[union-attr]
        assert_right(brain.conn)
        brain.purge(a)  # its links and edges go with it
        assert ("team", a) not in assert_right(brain.conn)
        with psycopg.connect(address.conninfo, autocommit=True) as agentos:
            agentos_edge(agentos, "team", "e1", "x", "y")
            agentos_edge(agentos, "other", "e1", "x", "y")  # another brain of the database
            agentos_edge(agentos, "team", "e1", "x", "z")  # the upsert moves an end
            agentos.execute("UPDATE knowledge_edges SET weight = 0.9")  # no end moves
            truth = assert_right(agentos)
            assert ("team", "y") not in truth and truth[("team", "z")] == 1
            assert truth[("other", "y")] == 1
            with agentos.transaction():
                agentos.execute(
                    "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, "
                    "created_at) SELECT 'team', 'm' || g, 'x', 'y', 'mentions', 1 "
                    "FROM generate_series(1, 50) g"
                )
            assert assert_right(agentos)[("team", "x")] == 51
            agentos.execute("DELETE FROM knowledge_edges WHERE brain_id = 'team'")
            assert ("team", "x") not in assert_right(agentos)
            assert ("other", "x") in kept(agentos)


def test_two_writers_at_once_lose_no_count(pg_address: str) -> None:
    address = parse_postgres_address(pg_address)
    with SharedBrain.open(pg_address, actor="test"):
        pass  # the layout
    errors: list[BaseException] = []

    def write(name: str) -> None:
        try:
            with psycopg.connect(address.conninfo, autocommit=True) as conn:
                for n in range(40):  # both toward the same two hubs, in opposite orders
                    ends = ("hub1", "hub2") if name == "w1" else ("hub2", "hub1")
                    agentos_edge(conn, "team", f"{name}-{n}", *ends)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)

    writers = [threading.Thread(target=write, args=(w,)) for w in ("w1", "w2")]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert not errors
    with psycopg.connect(address.conninfo, autocommit=True) as conn:
        assert assert_right(conn)[("team", "hub1")] == 80


def test_a_database_of_layout_7_gets_its_degrees_on_open(pg_address: str) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        a, b = brain.add("one").id, brain.add("two").id
        brain.link(a, b, "relates_to")
        conn = brain.conn
        for name in postgres_degrees.TRIGGERS:  # the database as layout 7 left it
            table = "memory_links" if "_links_" in name else "knowledge_edges"
            conn.execute(f"DROP TRIGGER {name} ON {table}")
            conn.execute(f"DROP FUNCTION {name}()")
        conn.execute("DROP TABLE memgui_degrees")
        conn.execute(
            "UPDATE brain_meta SET value = '7' WHERE brain_id = 'team' AND key = %s",
            (postgres.SCHEMA_KEY,),
        )
        brain.link(b, a, "caused_by")  # written at layout 7: nothing counts it
        assert not postgres_degrees.installed(conn)
    with SharedBrain.open(pg_address, actor="test") as brain:
        assert postgres_degrees.installed(brain.conn)
        assert assert_right(brain.conn) == {("team", a): 2, ("team", b): 2}
        brain.link(a, b, "caused_by")
        assert assert_right(brain.conn)[("team", a)] == 3
        meta = brain.conn.execute(
            "SELECT value FROM brain_meta WHERE brain_id = 'team' AND key = %s",
            (postgres.SCHEMA_KEY,),
        ).fetchone()
        assert meta == ("8",) == (str(postgres.SCHEMA_VERSION),)


def test_the_overview_ranks_by_the_kept_degrees(pg_address: str) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        ids = [brain.add(f"memory {n}").id for n in range(4)]
        for other in ids[1:]:
            brain.link(ids[0], other, "relates_to")
        first = graph_view.overview(brain, 0, 10)
        assert {i: n.degree for i, n in first.found.nodes.items()} == {
            ids[0]: 3,
            **dict.fromkeys(ids[1:], 1),
        }
        assert first.linked == 4
        # What the overview ranks by is the kept count: raised by hand, it leads.
        brain.conn.execute(
            "UPDATE memgui_degrees SET degree = 99 WHERE brain_id = 'team' AND node_id = %s",
            (ids[3],),
        )
        page = graph_view.overview(brain, 0, 1)
        assert list(page.found.nodes) == [ids[3]] and page.found.nodes[ids[3]].degree == 99


def test_a_brain_copied_in_has_its_degrees(tmp_path: Path, pg_address: str) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, "team", actor="test") as brain:
        ids = [brain.add(f"memory {n}").id for n in range(6)]
        for other in ids[1:]:
            brain.link(ids[0], other, "relates_to")
        hub, spoke = (brain.add_node(n, "concept").id for n in ("hub", "spoke"))
        brain.add_edge(spoke, hub, "mentions")
    run_to_end(copy_brain(path, pg_address))
    with SharedBrain.open(pg_address, actor="test") as shared:
        truth = assert_right(shared.conn)
        assert truth[("team", ids[0])] == 5 and truth[("team", hub)] == 1
