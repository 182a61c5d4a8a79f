"""Knowledge-graph writes are journaled and revertible; bad weights and pages write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict, InvalidArgument


def graph(brain: Brain) -> tuple[list, list]:
    nodes = brain.db.conn.execute("SELECT id, label FROM knowledge_nodes ORDER BY id").fetchall()
    edges = brain.db.conn.execute("SELECT id, source_id, target_id FROM knowledge_edges").fetchall()
    return nodes, edges


def test_add_node_and_edge_are_journaled_and_revertible(brain: Brain) -> None:
    start = brain.last_journal_id()
    alice = brain.add_node("Alice", "person", {"age": 3}).id
    bob = brain.add_node("Bob", "person").id
    edge = brain.add_edge(alice, bob, "knows", 0.5).id
    rows = brain.journal_since(start)
    assert [(e.op, e.trace_id, e.actor) for e in rows] == [
        ("node", alice, "test"),
        ("node", bob, "test"),
        ("edge", edge, "test"),
    ]
    assert rows[0].before is None and rows[0].after["properties"] == {"age": 3}
    assert rows[2].after["weight"] == 0.5 and rows[2].after["source_id"] == alice
    assert len({e.batch_id for e in rows}) == 3
    brain.revert(rows[2].batch_id)
    assert graph(brain)[1] == []
    brain.revert(brain.journal_since(0)[-1].batch_id)  # the revert of the revert
    assert graph(brain)[1] == [(edge, alice, bob)]


def test_revert_add_node_used_by_a_later_edge_is_a_conflict(brain: Brain) -> None:
    alice = brain.add_node("Alice", "person").id
    node_batch = brain.journal_since(0)[-1].batch_id
    brain.add_edge(alice, brain.add_node("Bob", "person").id, "knows")
    before, journal_before = graph(brain), brain.last_journal_id()
    with pytest.raises(Conflict):
        brain.revert(node_batch)
    assert graph(brain) == before and brain.last_journal_id() == journal_before


def test_revert_add_node_twice_is_a_conflict(brain: Brain) -> None:
    brain.add_node("Alice", "person")
    node_batch = brain.journal_since(0)[-1].batch_id
    brain.revert(node_batch)
    journal_before = brain.last_journal_id()
    with pytest.raises(Conflict):
        brain.revert(node_batch)
    assert brain.last_journal_id() == journal_before


@pytest.mark.parametrize("weight", ["x", float("nan"), float("inf"), -float("inf"), 10**400, True])
def test_add_edge_rejects_a_weight_that_is_not_a_finite_number(brain: Brain, weight) -> None:
    a, b = brain.add_node("a", "t").id, brain.add_node("b", "t").id
    journal_before = brain.last_journal_id()
    with pytest.raises(InvalidArgument) as err:
        brain.add_edge(a, b, "knows", weight)
    assert err.value.field == "weight" and "finite number" in str(err.value)
    assert err.value.value is weight
    assert graph(brain)[1] == [] and brain.last_journal_id() == journal_before


@pytest.mark.parametrize(
    ("limit", "offset", "field"), [(0, 0, "limit"), ("5", 0, "limit"), (10, -1, "offset")]
)
def test_nodes_and_edges_pages_are_bounded(brain: Brain, limit, offset, field: str) -> None:
    for call in (brain.nodes, brain.edges):
        with pytest.raises(InvalidArgument) as err:
            call(limit=limit, offset=offset)
        assert err.value.field == field


@pytest.mark.parametrize(
    ("call", "field", "words"),
    [
        (lambda b: b.add_node("bad\udcff", "concept"), "label", "valid Unicode"),
        (lambda b: b.add_node("ok", "con\udcffcept"), "type", "valid Unicode"),
        (lambda b: b.add_node("ok", "concept", {"tags": {1, 2}}), "properties", "JSON values"),
    ],
)
def test_a_node_with_bad_text_or_properties_is_refused(
    brain: Brain, call, field: str, words: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        call(brain)
    assert refused.value.field == field and words in str(refused.value)
    assert brain.nodes() == []


def test_an_empty_graph_lists_no_nodes_and_no_edges(brain: Brain) -> None:
    assert brain.nodes() == [] and brain.edges() == []


def test_reverting_a_purge_gives_back_its_chunks_trace_and_its_feedback(
    agentos_copy: Path,
) -> None:
    chunk_trace = "mt_d8a15557-ee67-4120-8520-f02c6ba0fbed"
    rated = "mt_635740e1-12eb-41ff-a8bf-f88feeeac3c3"

    def rows(brain: Brain) -> tuple[list, list]:
        conn = brain.db.conn
        chunks = conn.execute("SELECT id, trace_id FROM document_chunks ORDER BY id").fetchall()
        feedback = conn.execute("SELECT * FROM retrieval_feedback ORDER BY id").fetchall()
        return chunks, feedback

    with Brain.open(agentos_copy) as brain:
        brain.add("migrates the brain first")
        before = rows(brain)
        brain.purge(chunk_trace)
        brain.purge(rated)
        chunks, feedback = rows(brain)
        assert chunks[0][1] is None and [r[2] for r in feedback] == [
            t for t in [r[2] for r in before[1]] if t != rated
        ]
        purges = [e.batch_id for e in brain.journal_since(0) if e.op == "purge"]
        assert len(purges) == 2
        for batch_id in reversed(purges):
            brain.revert(batch_id)
        assert rows(brain) == before
        assert brain.get(chunk_trace) and brain.get(rated)


def _graph_rows(brain: Brain) -> tuple[list, list]:
    conn = brain.db.conn
    nodes = conn.execute(
        "SELECT id, type, label, properties, confidence, source, created_at "
        "FROM knowledge_nodes ORDER BY id"
    ).fetchall()
    edges = conn.execute(
        "SELECT id, source_id, target_id, type, weight, bidirectional, metadata, created_at "
        "FROM knowledge_edges ORDER BY id"
    ).fetchall()
    return nodes, edges


LINKED_TRACE = "mt_b7e867c6-54d1-4056-a2da-bc199d2c9dc5"  # AgentOS gave it a node and an edge


@pytest.mark.parametrize("how", ["purge", "sweep", "scope"])
def test_a_hard_delete_takes_the_traces_graph_copy_and_revert_brings_it_back(
    agentos_copy: Path, how: str
) -> None:
    with Brain.open(agentos_copy, actor="test") as brain:
        before = _graph_rows(brain)
        assert LINKED_TRACE in {n[0] for n in before[0]}
        assert any(LINKED_TRACE in e[1:3] for e in before[1])
        trace = brain.get(LINKED_TRACE)
        start = brain.last_journal_id()
        if how == "purge":
            brain.purge(LINKED_TRACE)
        elif how == "sweep":
            brain.update(LINKED_TRACE, {"ttl_secs": 1})
            brain.clock = lambda: trace.created_at + 10**12  # long after it expired
            start = brain.last_journal_id()
            assert brain.sweep().expired >= 1
        else:
            brain.delete_scope(trace.scope, trace.scope_id)
        nodes, edges = _graph_rows(brain)
        assert LINKED_TRACE not in {n[0] for n in nodes}
        assert not any(LINKED_TRACE in e[1:3] for e in edges)
        if how != "scope":  # a scope's delete takes its other traces' nodes too
            assert len(nodes) == len(before[0]) - 1
        (batch_id,) = {e.batch_id for e in brain.journal_since(start)}
        brain.revert(batch_id)
        assert _graph_rows(brain) == before
