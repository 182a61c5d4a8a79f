"""Graph edits: each one write a revert undoes; no delete leaves a graph row naming nothing."""

from __future__ import annotations

import pytest

from memgui.core import graph_view
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
    concept = brain.add_node("Kyoto", "concept").id
    before = graph_rows(brain)
    made = graph_view.connect(brain, trace, concept, "mentions")
    edge = made.id
    assert made.edges == {edge} and made.nodes == {trace}
    again = graph_view.connect(brain, trace, concept, "mentions")
    assert again.id == edge and not again  # once: nothing changed the second time
    nodes, edges, _ = graph_rows(brain)
    assert (trace, "memory_graph", trace) in nodes
    assert (edge, trace, concept, "mentions") in edges
    batch = brain.journal_since(0)[-1].batch_id
    brain.revert(batch)
    assert graph_rows(brain) == before


def test_delete_node_takes_its_edges_and_undoes_exactly(brain: Brain) -> None:
    a, b = brain.add_node("A", "concept").id, brain.add_node("B", "concept").id
    trace = brain.add("memory").id
    brain.add_edge(a, b, "related_to")
    graph_view.connect(brain, trace, a, "mentions")
    before = graph_rows(brain)
    last = brain.last_journal_id()
    deleted = graph_view.delete_node(brain, a)
    assert deleted.count == 2 and deleted.nodes == {a} and len(deleted.edges) == 2
    assert orphans(brain) == []
    assert a not in {n[0] for n in graph_rows(brain)[0]}
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert graph_rows(brain) == before


def test_a_trace_copy_is_not_deleted_as_a_node(brain: Brain) -> None:
    trace = brain.add("memory").id
    graph_view.connect(brain, trace, brain.add_node("C", "concept").id, "mentions")
    with pytest.raises(InvalidArgument, match="forget the memory"):
        graph_view.delete_node(brain, trace)
    with pytest.raises(NotFound):
        graph_view.delete_node(brain, "kn_nothing")


def test_merge_nodes_moves_edges_to_the_survivor(brain: Brain) -> None:
    a, b, c = (brain.add_node(x, "concept").id for x in "ABC")
    trace = brain.add("memory").id
    graph_view.connect(brain, trace, a, "mentions")
    graph_view.connect(brain, trace, b, "mentions")  # the same edge once moved: dropped
    brain.add_edge(b, c, "related_to")
    brain.add_edge(a, b, "related_to")  # within the merged: dropped
    before = graph_rows(brain)
    last = brain.last_journal_id()
    merged = graph_view.merge_nodes(brain, [a, b], survivor=a)
    assert merged.count == 1 and merged.nodes == {b}  # one moved, two dropped
    nodes, edges, _ = graph_rows(brain)
    assert b not in {n[0] for n in nodes}
    assert {(s, t, k) for _i, s, t, k in edges} == {(trace, a, "mentions"), (a, c, "related_to")}
    assert orphans(brain) == []
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert graph_rows(brain) == before
    with pytest.raises(InvalidArgument) as error:
        graph_view.merge_nodes(brain, [a, b], survivor=c)
    assert error.value.field == "survivor"


def test_a_trace_merge_keeps_the_chosen_survivor_and_carries_its_edges(brain: Brain) -> None:
    keep, gone, other = brain.add("keep"), brain.add("gone"), brain.add("other")
    concept = brain.add_node("Topic", "concept").id
    graph_view.connect(brain, gone.id, concept, "mentions")
    brain.link(gone.id, other.id, "caused_by")
    brain.update(gone.id, {"tags": ["x"]})
    last = brain.last_journal_id()
    merged = brain.merge([gone.id, keep.id], keep=keep.id)
    assert merged.id == keep.id
    edges = graph_rows(brain)[1]
    assert any(s == keep.id and t == concept for _i, s, t, _k in edges)
    assert (keep.id, other.id, "caused_by") in graph_rows(brain)[2]
    brain.revert(brain.journal_since(last)[0].batch_id)
    assert not any(s == keep.id for _i, s, _t, _k in graph_rows(brain)[1])
    with pytest.raises(InvalidArgument) as error:
        brain.merge([keep.id, other.id], keep=concept)
    assert error.value.field == "keep"


def test_no_delete_leaves_an_orphan_graph_row(brain: Brain, tmp_path) -> None:
    vault = FIXTURES / "io" / "vault"
    planned = run_to_end(plan(brain, vault, options=ImportOptions(format="obsidian")))
    result = run_to_end(commit(brain, planned))
    traces = brain.list_ids()
    assert brain.nodes(limit=1000) and brain.edges(limit=1000)
    a, b, c, d = traces[:4]
    brain.link(a, b, "relates_to")
    graph_view.connect(brain, c, brain.add_node("X", "concept").id, "mentions")
    brain.purge(a)
    assert orphans(brain) == []
    brain.merge([b, c], keep=b)
    brain.purge(c)
    assert orphans(brain) == []
    graph_view.delete_node(brain, brain.add_node("Y", "concept").id)
    brain.add(content="short lived", ttl_secs=1)
    brain.clock = lambda: 2**45
    brain.sweep()
    assert orphans(brain) == []
    brain.clock = Brain(brain.db, brain.brain_id, "x").clock
    scoped = brain.add("in a scope", scope_id="s1").id
    graph_view.connect(brain, scoped, d, "related_to")
    brain.link(scoped, d, "supersedes")
    brain.delete_scope("user", "s1")
    assert orphans(brain) == []
    again = run_to_end(commit(brain, run_to_end(plan(brain, vault, options=planned.options))))
    brain.revert(again.batch_id)
    assert orphans(brain) == []
    assert result.batch_id
