"""The graph view's edits and overview on both engines: connect, remove an edge, delete and
merge knowledge nodes write the same rows on a SQLite file and on a real PostgreSQL server,
each one batch a revert undoes to the exact rows before; a refused edit writes nothing; an
overview ranks the same nodes the same way and says how many are linked."""

from __future__ import annotations

from typing import Any

import pytest

from memgui.core import graph_view as gv
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.storage.engine import BrainStore

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def rows(store: BrainStore) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    nodes = sorted((n["id"], n["type"], n["label"]) for n in store.nodes(limit=1000))
    edges = sorted(
        (e["id"], e["source_id"], e["target_id"], e["type"]) for e in store.edges(limit=1000)
    )
    return nodes, edges


def last_batch(changes: Any) -> str:
    assert changes.batch_id
    return str(changes.batch_id)


def test_connect_and_remove_edge_undo_exactly(store: BrainStore) -> None:
    trace = store.add("a memory").id
    concept = store.add_node("Kyoto", "concept").id
    before = rows(store)

    made = gv.connect(store, trace, concept, "mentions")  # type: ignore[arg-type]

    assert made.edges == {made.id} and made.nodes == {trace}
    again = gv.connect(store, trace, concept, "mentions")  # type: ignore[arg-type]
    assert again.id == made.id and not again  # there already: nothing changed
    nodes, edges = rows(store)
    assert (trace, "memory_graph", trace) in nodes
    assert (made.id, trace, concept, "mentions") in edges
    removed = gv.remove_edge(store, made.id)  # type: ignore[arg-type]
    assert removed.edges == {made.id} and rows(store)[1] == []
    assert not gv.remove_edge(store, made.id)  # type: ignore[arg-type]
    store.revert(last_batch(removed))
    assert (made.id, trace, concept, "mentions") in rows(store)[1]
    store.revert(last_batch(made))
    assert rows(store) == before


def test_delete_and_merge_nodes_undo_exactly(store: BrainStore) -> None:
    a, b, c, d = (store.add_node(x, "concept").id for x in "ABCD")
    store.add_edge(a, c, "about")
    store.add_edge(b, c, "about")  # the survivor has it already: dropped
    store.add_edge(b, d, "part_of")  # moved to the survivor
    store.add_edge(a, b, "related_to")  # joins the survivor to itself: dropped
    before = rows(store)

    merged = gv.merge_nodes(store, [a, b], a)  # type: ignore[arg-type]

    assert merged.count == 1
    nodes, edges = rows(store)
    assert [n[0] for n in nodes] == sorted([a, c, d])
    assert sorted((s, t, k) for _i, s, t, k in edges) == sorted(
        [(a, c, "about"), (a, d, "part_of")]
    )
    store.revert(last_batch(merged))
    assert rows(store) == before

    deleted = gv.delete_node(store, c)  # type: ignore[arg-type]
    assert deleted.count == 2 and c not in {n[0] for n in rows(store)[0]}
    store.revert(last_batch(deleted))
    assert rows(store) == before


def test_refused_edits_name_the_field_and_write_nothing(store: BrainStore) -> None:
    trace = store.add("a memory").id
    concept = store.add_node("Kyoto", "concept").id
    gv.connect(store, trace, concept, "mentions")  # type: ignore[arg-type]
    before = rows(store)
    with pytest.raises(InvalidArgument) as copy:
        gv.delete_node(store, trace)  # type: ignore[arg-type]
    assert copy.value.field == "node_id"
    with pytest.raises(NotFound):
        gv.delete_node(store, "kn_missing")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument) as same:
        gv.connect(store, concept, concept, "about")  # type: ignore[arg-type]
    assert same.value.field == "target_id"
    with pytest.raises(InvalidArgument) as kind:
        gv.connect(store, trace, concept, " ")  # type: ignore[arg-type]
    assert kind.value.field == "type"
    with pytest.raises(InvalidArgument) as survivor:
        gv.merge_nodes(store, [concept, trace], "elsewhere")  # type: ignore[arg-type]
    assert survivor.value.field == "survivor"
    with pytest.raises(InvalidArgument) as memories:
        gv.merge_nodes(store, [concept, trace], concept)  # type: ignore[arg-type]
    assert memories.value.field == "ids"
    with pytest.raises(NotFound):
        gv.connect(store, "mt_missing", concept, "about")  # type: ignore[arg-type]
    forgotten = store.add("forgotten").id
    store.forget(forgotten)
    with pytest.raises(InvalidArgument) as live:
        gv.connect(store, forgotten, concept, "about")  # type: ignore[arg-type]
    assert live.value.field == "id"
    assert rows(store) == before


def test_an_overview_ranks_alike_on_both_engines(store: BrainStore) -> None:
    hub = store.add("the hub").id
    leaves = [store.add(f"leaf {i}").id for i in range(4)]
    for leaf in leaves:
        store.link(hub, leaf, "relates_to")
    store.link(leaves[0], leaves[1], "caused_by")
    concept = store.add_node("Topic", "concept").id
    gv.connect(store, leaves[0], concept, "mentions")  # type: ignore[arg-type]
    store.add("alone, in no overview")

    first = gv.overview(store, 0, 3)  # type: ignore[arg-type]

    assert first.linked == 6 and first.pages == 2
    ranked = sorted(first.found.nodes.values(), key=lambda n: (-n.degree, n.id))
    assert [n.id for n in ranked][:2] == [hub, leaves[0]]
    assert (ranked[0].degree, ranked[1].degree) == (4, 3)
    shown = set(first.found.nodes)
    for edge in first.found.edges.values():
        assert {edge.source, edge.target} <= shown
    assert len(first.found.edges) == len(
        [
            e
            for e in gv.neighbourhood(store, hub, 2).edges.values()  # type: ignore[arg-type]
            if {e.source, e.target} <= shown
        ]
    )
    second = gv.overview(store, 1, 3)  # type: ignore[arg-type]
    assert set(second.found.nodes).isdisjoint(shown) and len(second.found.nodes) == 3
    past = gv.overview(store, 5, 3)  # type: ignore[arg-type]
    assert past.linked == 6 and not past.found.nodes
    store.forget(hub)
    assert hub not in gv.overview(store, 0, 10).found.nodes  # type: ignore[arg-type]
