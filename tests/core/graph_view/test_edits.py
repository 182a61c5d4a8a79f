"""Graph edits: each one write a revert undoes; no delete leaves a graph row naming nothing."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.progress import run_to_end
from tests.support.paths import FIXTURES


def orphans(brain: Brain) -> list[tuple]:
    """Edges whose end is no node, and trace copies whose trace is gone."""
    conn, bid = brain.db.conn, brain.brain_id
    dangling = conn.execute(
        "SELECT e.id FROM knowledge_edges e WHERE e.brain_id = ?1 AND ("
        "NOT EXISTS (SELECT 1 FROM knowledge_nodes n WHERE n.brain_id = ?1 AND n.id = e.source_id)"
        " OR NOT EXISTS (SELECT 1 FROM knowledge_nodes n WHERE n.brain_id = ?1 "
        "AND n.id = e.target_id))",
        (bid,),
    ).fetchall()
    copies = conn.execute(
        "SELECT n.id FROM knowledge_nodes n WHERE n.brain_id = ?1 AND n.type = 'memory_graph' "
        "AND NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 AND t.id = n.id)",
        (bid,),
    ).fetchall()
    links = conn.execute(
        "SELECT l.from_id FROM memory_links l WHERE l.brain_id = ?1 AND ("
        "NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 AND t.id = l.from_id) OR "
        "NOT EXISTS (SELECT 1 FROM memory_traces t WHERE t.brain_id = ?1 AND t.id = l.to_id))",
        (bid,),
    ).fetchall()
    return dangling + copies + links


def graph_rows(brain: Brain) -> tuple[list, list, list]:
    conn = brain.db.conn
    return (
        sorted(conn.execute("SELECT id, type, label FROM knowledge_nodes").fetchall()),
        sorted(conn.execute("SELECT id, source_id, target_id, type FROM knowledge_edges")),
        sorted(conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()),
    )


def test_connect_makes_the_trace_a_graph_node_and_a_revert_removes_both(brain: Brain) -> None:
    trace = brain.add("a memory").id
    concept = brain.add_node("Kyoto", "concept")
    before = graph_rows(brain)
    edge = brain.connect(trace, concept, "mentions")
    assert brain.connect(trace, concept, "mentions") == edge  # once
    nodes, edges, _ = graph_rows(brain)
    assert (trace, "memory_graph", trace) in nodes
    assert (edge, trace, concept, "mentions") in edges
    batch = brain.journal_since(0)[-1].batch_id
    brain.revert(batch)
    assert graph_rows(brain) == before


def test_delete_node_takes_its_edges_and_undoes_exactly(brain: Brain) -> None:
    a, b = brain.add_node("A", "concept"), brain.add_node("B", "concept")
    trace = brain.add("memory").id
    brain.add_edge(a, b, "related_to")
    brain.connect(trace, a, "mentions")
    before = graph_rows(brain)
    last = brain.last_journal_id()
    assert brain.delete_node(a) == 2
    assert orphans(brain) == []
    assert a not in {n[0] for n in graph_rows(brain)[0]}
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert graph_rows(brain) == before


def test_a_trace_copy_is_not_deleted_as_a_node(brain: Brain) -> None:
    trace = brain.add("memory").id
    brain.connect(trace, brain.add_node("C", "concept"), "mentions")
    with pytest.raises(InvalidArgument, match="forget the memory"):
        brain.delete_node(trace)
    with pytest.raises(NotFound):
        brain.delete_node("kn_nothing")


def test_merge_nodes_moves_edges_to_the_survivor(brain: Brain) -> None:
    a, b, c = (brain.add_node(x, "concept") for x in "ABC")
    trace = brain.add("memory").id
    brain.connect(trace, a, "mentions")
    brain.connect(trace, b, "mentions")  # the same edge once moved: dropped
    brain.add_edge(b, c, "related_to")
    brain.add_edge(a, b, "related_to")  # within the merged: dropped
    before = graph_rows(brain)
    last = brain.last_journal_id()
    assert brain.merge_nodes([a, b], survivor=a) == {"moved": 1, "dropped": 2}
    nodes, edges, _ = graph_rows(brain)
    assert b not in {n[0] for n in nodes}
    assert {(s, t, k) for _i, s, t, k in edges} == {(trace, a, "mentions"), (a, c, "related_to")}
    assert orphans(brain) == []
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert graph_rows(brain) == before
    with pytest.raises(InvalidArgument) as error:
        brain.merge_nodes([a, b], survivor=c)
    assert error.value.field == "survivor"


def test_a_trace_merge_keeps_the_chosen_survivor_and_carries_its_edges(brain: Brain) -> None:
    keep, gone, other = brain.add("keep"), brain.add("gone"), brain.add("other")
    concept = brain.add_node("Topic", "concept")
    brain.connect(gone.id, concept, "mentions")
    brain.link(gone.id, other.id, "caused_by")
    brain.update(gone.id, {"tags": ["x"]})
    last = brain.last_journal_id()
    merged = brain.merge([gone.id, keep.id], survivor=keep.id)
    assert merged.id == keep.id
    edges = graph_rows(brain)[1]
    assert any(s == keep.id and t == concept for _i, s, t, _k in edges)
    assert (keep.id, other.id, "caused_by") in graph_rows(brain)[2]
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert not any(s == keep.id for _i, s, _t, _k in graph_rows(brain)[1])
    with pytest.raises(InvalidArgument) as error:
        brain.merge([keep.id, other.id], survivor=concept)
    assert error.value.field == "survivor"


def test_no_delete_leaves_an_orphan_graph_row(brain: Brain, tmp_path) -> None:
    vault = FIXTURES / "io" / "vault"
    planned = run_to_end(plan(brain, vault, options=ImportOptions(format="obsidian")))
    result = run_to_end(commit(brain, planned))
    traces = brain.list_ids()
    assert brain.nodes(limit=1000) and brain.edges(limit=1000)
    a, b, c, d = traces[:4]
    brain.link(a, b, "relates_to")
    brain.connect(c, brain.add_node("X", "concept"), "mentions")
    brain.purge(a)
    assert orphans(brain) == []
    brain.merge([b, c], survivor=b)
    brain.purge(c)
    assert orphans(brain) == []
    brain.delete_node(brain.add_node("Y", "concept"))
    brain.add(content="short lived", ttl_secs=1)
    brain.clock = lambda: 2**45
    brain.sweep()
    assert orphans(brain) == []
    brain.clock = Brain(brain.db, brain.brain_id, "x").clock
    scoped = brain.add("in a scope", scope_id="s1").id
    brain.connect(scoped, d, "related_to")
    brain.link(scoped, d, "supersedes")
    brain.delete_scope("user", "s1")
    assert orphans(brain) == []
    again = run_to_end(commit(brain, run_to_end(plan(brain, vault, options=planned.options))))
    brain.revert(again.batch_id)
    assert orphans(brain) == []
    assert result.batch_id
