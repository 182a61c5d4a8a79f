"""Each node's kept degree (schema 4) equals a recount after every kind of write, whoever
writes it, and the overview ranks by it."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw
import pytest

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.errors import Conflict
from memgui.core.io import ExportOptions, ImportOptions, commit, export, plan
from memgui.core.progress import run_to_end
from memgui.core.storage import degrees, schema
from tests.support.paths import AGENTOS, ROOT

VAULT = ROOT / "tests" / "fixtures" / "io" / "vault"


def kept(conn: apsw.Connection) -> dict[tuple[str, str], int]:
    rows = conn.execute("SELECT brain_id, node_id, degree FROM memgui_degrees")
    return {(b, n): d for b, n, d in rows}


def recounted(conn: apsw.Connection) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for sql in (
        "SELECT brain_id, from_id FROM memory_links",
        "SELECT brain_id, to_id FROM memory_links",
        "SELECT brain_id, source_id FROM knowledge_edges",
        "SELECT brain_id, target_id FROM knowledge_edges",
    ):
        for key in conn.execute(sql):
            out[key] = out.get(key, 0) + 1
    return out


def check(brain: Brain) -> dict[tuple[str, str], int]:
    conn = brain.db.conn
    assert kept(conn) == recounted(conn)
    return kept(conn)


def test_links_edges_merges_forget_purge_and_reverts_keep_the_degrees(brain: Brain) -> None:
    a, b, c, d = (brain.add(f"memory {k}").id for k in "abcd")
    assert degrees.is_kept(brain.db.tables, brain.db.triggers)
    brain.link(a, b, "relates_to")
    brain.link(a, c, "caused_by")
    brain.link(c, a, "supersedes")
    brain.link(a, b, "relates_to")  # there already: nothing changes
    assert check(brain)[(brain.brain_id, a)] == 3
    concept = brain.add_node("Deploys", "concept").id
    person = brain.add_node("Alice", "person").id
    edge = brain.add_edge(concept, person, "owned_by").id
    graph_view.connect(brain, a, concept, "mentions")
    loop = brain.add_edge(person, person, "knows").id  # a loop counts at both ends
    assert check(brain)[(brain.brain_id, person)] == 3
    graph_view.remove_edge(brain, edge)
    check(brain)
    brain.unlink(a, c, "caused_by")
    check(brain)
    brain.forget(b)  # a forgotten memory keeps its links
    check(brain)
    brain.merge([a, d], keep=d)
    check(brain)
    other = brain.add_node("Deploying", "concept").id
    brain.add_edge(other, person, "owned_by")
    graph_view.merge_nodes(brain, [concept, other], concept)
    check(brain)
    brain.purge(c)
    check(brain)
    batches = list(dict.fromkeys(e.batch_id for e in brain.journal_since(0)))
    ops = {e.batch_id: e.op for e in brain.journal_since(0)}
    reverted = []
    for batch_id in reversed(batches):  # undone newest first, while nothing later conflicts
        try:
            brain.revert(batch_id)
        except Conflict:
            break
        reverted.append(ops[batch_id])
        check(brain)
    assert reverted[0] == "purge" and len(reverted) >= 3, reverted
    del loop


def test_an_import_and_its_revert_keep_the_degrees(brain: Brain) -> None:
    result = run_to_end(
        commit(brain, run_to_end(plan(brain, VAULT, options=ImportOptions(format="obsidian"))))
    )
    assert result.imported > 0
    assert check(brain), "the vault's wikilinks are edges"
    batch = brain.journal_since(0)[-1].batch_id
    brain.revert(batch)
    assert check(brain) == {}


def test_another_programs_plain_sql_keeps_the_degrees(brain: Brain, brain_path: Path) -> None:
    a, b = brain.add("one").id, brain.add("two").id
    bid = brain.brain_id
    agent = apsw.Connection(str(brain_path))  # as AgentOS writes: no memgui code at all
    agent.setbusytimeout(5_000)
    for node in ("n1", "n2", "n3"):
        agent.execute(
            "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
            "VALUES (?, ?, 'concept', ?, 0)",
            (bid, node, node),
        )
    insert = (
        "INSERT {} INTO knowledge_edges (brain_id, id, source_id, target_id, type, created_at) "
        "VALUES (?, ?, ?, ?, 'related_to', 0)"
    )
    agent.execute(insert.format(""), (bid, "e1", "n1", "n2"))
    agent.execute(insert.format("OR REPLACE"), (bid, "e1", "n1", "n3"))  # AgentOS's addEdge
    agent.execute(insert.format("OR REPLACE"), (bid, "e2", a, "n1"))
    agent.execute(insert.format("OR IGNORE"), (bid, "e2", b, "n2"))  # ignored: no change
    agent.execute(insert.format("OR REPLACE"), (bid, "e2", a, "n1"))  # same row again
    agent.execute(
        "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, created_at) "
        "VALUES (?, 'e3', 'n2', 'n3', 't', 0) ON CONFLICT (brain_id, id) DO UPDATE "
        "SET target_id = excluded.target_id",
        (bid,),
    )
    agent.execute(
        "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, created_at) "
        "VALUES (?, 'e3', 'n2', 'n1', 't', 0) ON CONFLICT (brain_id, id) DO UPDATE "
        "SET target_id = excluded.target_id",
        (bid,),
    )
    agent.execute(
        "UPDATE knowledge_edges SET source_id = ? WHERE brain_id = ? AND source_id = 'n2'",
        (b, bid),
    )  # AgentOS's node merge moves edges so
    agent.execute("DELETE FROM knowledge_edges WHERE brain_id = ? AND id = 'e1'", (bid,))
    agent.execute(
        "INSERT OR REPLACE INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
        "VALUES (?, ?, ?, 'relates_to', 0)",
        (bid, a, b),
    )
    agent.execute(
        "INSERT OR REPLACE INTO memory_links (brain_id, from_id, to_id, kind, created_at) "
        "VALUES (?, ?, ?, 'relates_to', 1)",
        (bid, a, b),
    )
    agent.close()
    counts = check(brain)
    assert counts[(bid, a)] == 2 and counts[(bid, b)] == 2 and (bid, "n2") not in counts
    assert counts[(bid, "n1")] == 2


def test_a_missing_trigger_is_made_again_and_the_degrees_recounted(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        a, b = brain.add("one").id, brain.add("two").id
        brain.db.conn.execute("DROP TRIGGER memgui_degrees_links_insert")
        brain.db.refresh_schema_state()
        assert not degrees.is_kept(brain.db.tables, brain.db.triggers)
        brain.link(a, b, "relates_to")  # this write's own trigger check makes it again
    with Brain.open(brain_path, actor="test") as brain:
        brain.link(b, a, "caused_by")
        assert degrees.is_kept(brain.db.tables, brain.db.triggers)
        assert check(brain)[(brain.brain_id, a)] == 2


def _as_schema_3(path: Path) -> None:
    """Make a brain file of this code look as schema 3 left it."""
    conn = apsw.Connection(str(path))
    for name in degrees.TRIGGER_NAMES:
        conn.execute(f"DROP TRIGGER {name}")
    conn.execute("DROP TABLE memgui_degrees; DROP TABLE memgui_degree_replaced")
    conn.execute("DROP TABLE memgui_stems")  # schema 9's
    conn.execute("UPDATE brain_meta SET value = '3' WHERE key = ?", (schema.SCHEMA_KEY,))
    conn.close()


def test_migrating_a_schema_3_brain_fills_the_degrees(brain_path: Path) -> None:
    with Brain.open(brain_path, actor="test") as brain:
        ids = [brain.add(f"memory {k}").id for k in range(4)]
        brain.link(ids[0], ids[1], "relates_to")
        brain.link(ids[0], ids[2], "relates_to")
        node = brain.add_node("Deploys", "concept").id
        graph_view.connect(brain, ids[0], node, "mentions")
    _as_schema_3(brain_path)
    with Brain.open(brain_path, actor="test") as brain:
        assert brain.db.schema_version == 3
        before = graph_view.overview(brain)  # read before the migration: counted
        assert [n.id for n in before.found.nodes.values()][0] == ids[0]
        brain.link(ids[2], ids[3], "caused_by")  # the first write migrates
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        counts = check(brain)
        assert counts[(brain.brain_id, ids[0])] == 3 and counts[(brain.brain_id, ids[2])] == 2
        after = graph_view.overview(brain)
        assert after.linked == before.linked + 1 == 5
        assert {n.id: n.degree for n in after.found.nodes.values()}[ids[0]] == 3
    assert list(brain_path.parent.glob(f"{brain_path.name}.backup-pre-{schema.SCHEMA_VERSION}-*"))


def test_an_agentos_brain_is_migrated_with_its_degrees(tmp_path: Path) -> None:
    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(AGENTOS / "brain.sqlite", path)  # the fixture itself is read-only
    with Brain.open(path, actor="test") as brain:
        brain.add("a memory: the first write migrates")
        assert brain.db.schema_version == schema.SCHEMA_VERSION
        assert check(brain), "the fixture's knowledge edges are counted"


def test_the_overview_ranks_by_the_kept_degree(brain: Brain) -> None:
    hub, *rest = (brain.add(f"memory {k}").id for k in range(6))
    for other in rest:
        brain.link(hub, other, "relates_to")
    brain.link(rest[0], rest[1], "relates_to")
    brain.db.conn.execute(
        "UPDATE memgui_degrees SET degree = 1000 WHERE node_id = ?", (rest[4],)
    )  # a count only the table holds: the ranking must come from it
    found = graph_view.overview(brain, size=3)
    assert list(found.found.nodes) == [rest[4], hub, min(rest[0], rest[1])]  # ties: by id
    assert found.found.nodes[rest[4]].degree == 1000 and found.linked == 6


@pytest.mark.parametrize("edges", [0, 3])
def test_degrees_of_a_neighbourhood_come_from_the_table(brain: Brain, edges: int) -> None:
    centre = brain.add("centre").id
    for k in range(edges):
        brain.link(centre, brain.add(f"leaf {k}").id, "relates_to")
    found = graph_view.neighbourhood(brain, centre, 1)
    assert found.nodes[centre].degree == edges


@pytest.mark.parametrize("selected", [False, True])
def test_a_sqlite_export_counts_what_it_copied(brain: Brain, tmp_path: Path, selected: bool):
    a, b, c = (brain.add(f"memory {k}").id for k in "abc")
    brain.link(a, b, "relates_to")
    brain.link(b, c, "caused_by")
    dest = tmp_path / "export.sqlite"
    options = ExportOptions(selection=[a, b] if selected else None)
    run_to_end(export(brain, dest, "sqlite", options))
    with Brain.open(dest, actor="test") as copy:
        assert degrees.is_kept(copy.db.tables, copy.db.triggers)
        counts = check(copy)
        assert counts[(copy.brain_id, b)] == (1 if selected else 2)
        copy.link(a, c if not selected else b, "supersedes")  # and kept from then on
        check(copy)
