"""The knowledge graph, merge, scopes, sweep and partial reverts on both engines: the same
calls give the same rows, neighbours, refusals and reverts on a SQLite file and on a real
PostgreSQL server (`BrainStore`)."""

from __future__ import annotations

from typing import Any

import pytest

from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.model import TraceFilter
from memgui.core.storage.engine import BrainStore

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def graph_rows(store: BrainStore) -> tuple[list[Any], list[Any]]:
    nodes = sorted((n["id"], n["label"], n["type"], n["properties"]) for n in store.nodes(1000))
    edges = sorted(
        (e["id"], e["source_id"], e["target_id"], e["type"], e["weight"]) for e in store.edges(1000)
    )
    return nodes, edges


def memory_node(store: BrainStore, trace_id: str) -> str:
    """AgentOS's node of a trace: `properties.trace_id` names it."""
    return store.add_node(trace_id, "memory_graph", {"trace_id": trace_id, "scopeId": "s1"}).id


def test_nodes_edges_and_neighbours(store: BrainStore) -> None:
    ship = store.add("we ship on Mondays")
    node = memory_node(store, ship.id)
    release = store.add_node("Release", "concept").id
    friday = store.add_node("Friday", "concept", {"day": 5}).id
    made = store.add_edge(node, release, "about", 0.5)
    assert made.id.startswith("ke_")
    store.add_edge(friday, release, "part_of")
    near = store.neighbours(ship.id, depth=1)  # a trace id: its node is the start
    assert [(n.node_id, n.label, n.hop, n.edge_type) for n in near] == [
        (release, "Release", 1, "about")
    ]
    deep, more = store.neighbours_and_more(ship.id, depth=2, limit=1)
    assert [n.node_id for n in deep] == [release] and more
    two = store.neighbours(node, depth=2)
    assert [(n.node_id, n.hop, n.via) for n in two] == [
        (release, 1, ""),
        (friday, 2, "Release"),
    ]
    # (edges made in one millisecond come in id order: compared as a set)
    assert {n.trace_id for n in store.neighbours(release)} == {ship.id, None}
    (edge,) = [e for e in store.edges() if e["id"] == made.id]
    assert edge["weight"] == 0.5 and edge["source_id"] == node
    with pytest.raises(NotFound):
        store.neighbours("kn_missing")
    with pytest.raises(NotFound):
        store.add_edge(node, "kn_missing", "about")
    with pytest.raises(InvalidArgument) as caught:
        store.neighbours(ship.id, depth=4)
    assert caught.value.field == "depth"
    with pytest.raises(InvalidArgument) as caught:
        store.add_edge(node, release, "about", float("nan"))
    assert caught.value.field == "weight"
    assert len(store.edges()) == 2  # nothing written by the refusals


def test_a_purged_trace_takes_its_graph_copy_and_a_revert_puts_it_back(
    store: BrainStore,
) -> None:
    kept = store.add("the staging database")
    absorbed = store.add("staging runs Postgres")
    concept = store.add_node("Postgres", "concept").id
    store.add_edge(memory_node(store, absorbed.id), concept, "about")
    # The survivor has no node: the merge makes its memory_graph node (id: the trace's).
    merged = store.merge([kept.id, absorbed.id], keep=kept.id)
    assert [n.node_id for n in store.neighbours(kept.id)] == [concept]
    assert kept.id in {n["id"] for n in store.nodes()}
    before = graph_rows(store)
    purged = store.purge(kept.id)
    assert kept.id not in {n["id"] for n in store.nodes()}  # its copy went with it
    assert store.edges() == []
    store.revert(purged.batch_id)
    assert graph_rows(store) == before
    assert store.get(kept.id).content == merged.content


def test_a_revert_of_an_added_node_used_since_is_a_conflict(store: BrainStore) -> None:
    node = store.add_node("Alpha", "concept")
    other = store.add_node("Beta", "concept")
    store.add_edge(node.id, other.id, "knows")
    with pytest.raises(Conflict):
        store.revert(node.batch_id)
    assert len(store.nodes()) == 2


def test_merge_moves_links_and_edges_and_a_revert_puts_them_back(store: BrainStore) -> None:
    alpha = store.add("Alpha note")
    beta = store.add("Beta note")
    other = store.add("a memory linked to Alpha")
    store.link(alpha.id, other.id, "relates_to")
    store.link(beta.id, alpha.id, "supersedes")  # between the merged: it only goes
    a_node = memory_node(store, alpha.id)
    b_node = memory_node(store, beta.id)
    mango = store.add_node("Mango", "concept").id
    kiwi = store.add_node("Kiwi", "concept").id
    store.add_edge(a_node, mango, "mentions")
    store.add_edge(a_node, kiwi, "mentions")
    store.add_edge(b_node, mango, "mentions")  # the survivor has it already
    store.add_edge(a_node, b_node, "mentions")  # between the merged: it only goes
    before = (graph_rows(store), store.related(other.id))

    merged = store.merge([alpha.id, beta.id], keep=beta.id)

    assert merged.id == beta.id and merged.content == "Alpha note | Beta note"
    assert store.get(alpha.id).deleted
    assert sorted(n.label for n in store.neighbours(beta.id)) == ["Kiwi", "Mango"]
    assert store.neighbours(a_node) == []
    assert [(r.id, r.kind) for r in store.related(beta.id)] == [(other.id, "relates_to")]
    ends = [(e["source_id"], e["target_id"]) for e in store.edges()]
    assert len(ends) == len(set(ends)) == 2 and all(s != t for s, t in ends)

    store.revert(merged.changes.batch_id)
    assert (graph_rows(store), store.related(other.id)) == before
    assert not store.get(alpha.id).deleted and store.get(beta.id).content == "Beta note"
    with pytest.raises(InvalidArgument) as caught:
        store.merge([alpha.id], keep=alpha.id)
    assert caught.value.field == "ids"


def test_scope_delete_and_refile_and_their_reverts(store: BrainStore) -> None:
    a = store.add("a", scope="thread", scope_id="t1", metadata={"turnUserId": "u1"})
    b = store.add("b", scope="thread", scope_id="t1", metadata={"contributors": ["u1"]})
    c = store.add("c", scope="thread", scope_id="t1", metadata={"userId": "u2"})
    other = store.add("d", scope="thread", scope_id="t2")
    store.forget(b.id)
    store.link(a.id, other.id, "relates_to")
    c2 = store.add("c2", scope="thread", scope_id="t3")
    store.add_edge(memory_node(store, c2.id), store.add_node("X", "concept").id, "about")
    store.merge([c.id, c2.id], keep=c.id)  # c gets its memory_graph node, scopeId t1
    node = c.id

    refiled = store.refile_scope("thread", "t1", "t9")
    assert refiled.count == 3
    assert {store.get(t.id).scope_id for t in (a, b, c)} == {"t9"}
    (props,) = [n["properties"] for n in store.nodes() if n["id"] == node]
    assert '"scopeId":"t9"' in props.replace(" ", "")
    assert store.refile_scope("thread", "t9", "t9").count == 0
    store.revert(refiled.batch_id)
    assert {store.get(t.id).scope_id for t in (a, b, c)} == {"t1"}

    deleted = store.delete_scope("thread", "t1", user_id="u1")
    assert deleted.count == 2
    left = {t.id for t in store.list_traces(TraceFilter(include_deleted=True))}
    assert left == {other.id, c.id, c2.id}
    assert store.related(other.id) == []
    store.revert(deleted.batch_id)
    assert store.count(TraceFilter(include_deleted=True)) == 5
    assert [r.id for r in store.related(other.id)] == [a.id]
    with pytest.raises(InvalidArgument) as caught:
        store.delete_scope("thread", "")
    assert caught.value.field == "scope_id"


def test_sweep_expires_and_a_revert_brings_them_back(store: BrainStore) -> None:
    kept = store.add("kept")
    gone = store.add("short lived", ttl_secs=1)
    store.link(kept.id, gone.id, "relates_to")
    clock = store.clock  # type: ignore[attr-defined]
    store.clock = lambda: clock() + 5_000  # type: ignore[attr-defined]
    report = store.sweep()
    assert (report.expired, report.embedded) == (1, 0)
    assert [t.id for t in store.list_traces(TraceFilter(include_deleted=True))] == [kept.id]
    assert store.sweep().expired == 0  # nothing due: nothing written
    store.revert(report.changes.batch_id)  # type: ignore[attr-defined]
    assert [r.id for r in store.related(kept.id)] == [gone.id]


def test_reverting_part_of_a_batch(store: BrainStore) -> None:
    a = store.add("a", scope="thread", scope_id="t")
    b = store.add("b", scope="thread", scope_id="t")
    store.link(a.id, b.id, "relates_to")
    deleted = store.delete_scope("thread", "t")
    entries = store.batch_entries(deleted.batch_id)
    removal = next(e for e in entries if e.trace_id == b.id and e.op == "purge")
    store.revert(deleted.batch_id, entry_ids=[removal.id])  # b, with the link that went
    assert [t.id for t in store.list_traces()] == [b.id]
    with pytest.raises(NotFound):
        store.get(a.id)
    with pytest.raises(InvalidArgument) as caught:
        store.revert(deleted.batch_id, entry_ids=[10**12])
    assert caught.value.field == "entry_ids"
    with pytest.raises(InvalidArgument):
        store.revert(deleted.batch_id, entry_ids=[])
