"""The graph view's neighbourhoods (`core/graph_view/query.py`) on both engines: the same
brain gives the same nodes, edges, degrees, pending lists and refreshes on a SQLite file and
on a real PostgreSQL server (`storage/postgres_graph_view.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from memgui.core import graph_view as gv
from memgui.core.errors import NotFound
from memgui.core.storage.engine import BrainStore

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def _star(store: BrainStore, leaves: int) -> tuple[str, list[str]]:
    hub = store.add("the hub memory\nsecond line").id
    others = [store.add(f"leaf {i:03d} of the star").id for i in range(leaves)]
    for other in others:
        store.link(hub, other, "relates_to")
    return hub, others


def test_links_and_knowledge_edges_are_one_neighbourhood(store: Any) -> None:
    new, old = store.add("the new rule"), store.add("the old rule")
    cause = store.add("the incident", metadata={"title": "Incident 42"})
    store.link(new.id, old.id, "supersedes")
    store.link(new.id, cause.id, "caused_by")
    mine = store.add_node(new.id, "memory_graph", {"trace_id": new.id}).id
    person = store.add_node("Alice", "person").id
    store.add_edge(mine, person, "mentions", 0.5)

    found = gv.neighbourhood(store, new.id, 2)

    assert set(found.nodes) == {new.id, old.id, cause.id}  # a node naming it is another node
    assert found.nodes[cause.id].label == "Incident 42"
    assert found.nodes[old.id].superseded and found.nodes[new.id].degree == 2
    around = gv.neighbourhood(store, mine)
    assert set(around.nodes) == {mine, person}
    assert around.nodes[person].kind == gv.NODE and around.nodes[person].label == "Alice"
    (edge,) = around.edges.values()
    assert (edge.source, edge.target, edge.kind, edge.origin, edge.weight) == (
        mine,
        person,
        "mentions",
        gv.GRAPH,
        0.5,
    )
    (edge_id,) = [e["id"] for e in store.edges()]
    assert edge.key == gv.edge_key(edge_id)
    assert gv.ends_of(store, [edge_id, "ke_missing"]) == {edge_id: (mine, person)}


def test_depth_forgotten_traces_and_hubs(store: BrainStore) -> None:
    a, b, c, d = (store.add(x).id for x in "abcd")
    store.link(a, b, "relates_to")
    store.link(b, c, "relates_to")
    store.link(c, d, "relates_to")
    store.link(a, c, "caused_by")
    assert set(gv.neighbourhood(store, a, 1).nodes) == {a, b, c}
    assert set(gv.neighbourhood(store, a, 2).nodes) == {a, b, c, d}
    store.forget(c)
    assert set(gv.neighbourhood(store, a, 3).nodes) == {a, b}
    assert set(gv.neighbourhood(store, a, 3, include_deleted=True).nodes) == {a, b, c, d}
    with pytest.raises(NotFound):
        gv.neighbourhood(store, c)
    start = store.add("start").id
    hub, _leaves = _star(store, 8)
    store.link(start, hub, "relates_to")
    found = gv.neighbourhood(store, start, 2, hub_degree=5)
    assert set(found.nodes) == {start, hub} and found.more[hub] == 8


def test_an_expand_leaves_the_rest_pending_and_refresh_rereads(store: BrainStore) -> None:
    hub, leaves = _star(store, 12)
    busy = leaves[7]
    for extra in (store.add(f"x{i}").id for i in range(3)):
        store.link(busy, extra, "caused_by")
    found = gv.neighbourhood(store, hub, 1, per_node=5)
    assert busy in found.nodes  # the highest degree first
    assert len(found.nodes) == 6 and found.more[hub] == 7 and len(found.pending[hub]) == 7
    more = gv.expand(store, hub, found.nodes.keys(), limit=5, pending=found.pending[hub])
    assert len(more.nodes) == 5 and not set(more.nodes) & set(found.nodes)
    assert len(more.pending[hub]) == 2
    shown = found.nodes.keys()
    shown_leaves = [i for i in shown if i != hub]
    store.update(shown_leaves[0], {"content": "renamed leaf"})
    store.link(shown_leaves[0], shown_leaves[1], "supersedes")
    store.purge(shown_leaves[2])
    nodes, edges, gone = gv.refresh(store, shown, shown_leaves[:3])
    assert nodes[shown_leaves[0]].label == "renamed leaf" and nodes[shown_leaves[1]].superseded
    assert gone == {shown_leaves[2]}
    assert gv.link_key(shown_leaves[0], shown_leaves[1], "supersedes") in edges


class _RowsReversed:
    """A brain whose graph rows come in the reverse order (as another engine may give them)."""

    def __init__(self, brain: Any) -> None:
        self.brain = brain

    def now(self) -> int:
        return int(self.brain.now())

    @contextmanager
    def graph_rows(self) -> Iterator[Any]:
        with self.brain.graph_rows() as rows:
            yield _Reversed(rows)


class _Reversed:
    def __init__(self, rows: Any) -> None:
        self.rows = rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rows, name)

    def incident(self, ids: Any, among: Any = None) -> list[Any]:
        return list(reversed(self.rows.incident(ids, among)))


def test_a_neighbour_two_nodes_reach_is_the_first_walked_ones(store: Any) -> None:
    """Whichever order an engine returns its rows in, a shared neighbour is a candidate of
    the node walked first (the one ranked first): both engines give the same neighbourhood."""
    centre = store.add("the centre").id
    first, second = store.add("walked first").id, store.add("walked second").id
    store.link(centre, first, "relates_to")
    store.link(centre, second, "relates_to")
    shared = [store.add(f"shared {i}").id for i in range(4)]
    for other in shared:
        store.link(second, other, "caused_by")
        store.link(first, other, "caused_by")
    store.link(first, store.add("first's own").id, "caused_by")  # ranks it first (degree)
    for brain in (store, _RowsReversed(store)):
        found = gv.neighbourhood(brain, centre, 2, per_node=2)
        assert found.nodes[first].degree > found.nodes[second].degree
        assert second not in found.pending  # every shared one was the first walked one's
        assert len(found.pending[first]) == 3 and len(found.nodes) == 5
