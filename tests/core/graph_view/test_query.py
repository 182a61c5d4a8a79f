"""Neighbourhoods for the graph view: what they hold, how they grow, that they never scan."""

from __future__ import annotations

import pytest

from memgui.core import graph_view as gv
from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, NotFound
from tests.support.query_plans import plan_of, selects_run


def _star(brain: Brain, leaves: int) -> tuple[str, list[str]]:
    hub = brain.add("the hub memory\nsecond line").id
    others = [brain.add(f"leaf {i:03d} of the star").id for i in range(leaves)]
    for other in others:
        brain.link(hub, other, "relates_to")
    return hub, others


def test_a_trace_its_links_and_knowledge_edges_are_one_neighbourhood(brain: Brain) -> None:
    new, old = brain.add("the new rule"), brain.add("the old rule")
    cause = brain.add("the incident", metadata={"title": "Incident 42"})
    brain.link(new.id, old.id, "supersedes")
    brain.link(new.id, cause.id, "caused_by")
    person = brain.add_node("Alice", "person").id
    brain.db.conn.execute(  # AgentOS's copy of the trace in its graph: the node's id is its id
        "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
        "VALUES (?, ?, 'memory_graph', ?, 0)",
        (brain.brain_id, new.id, new.id),
    )
    brain.add_edge(new.id, person, "mentions")

    found = gv.neighbourhood(brain, new.id)

    assert set(found.nodes) == {new.id, old.id, cause.id, person}
    assert found.nodes[new.id].kind == gv.TRACE  # the memory_graph copy is the trace itself
    assert found.nodes[person].kind == gv.NODE and found.nodes[person].label == "Alice"
    assert found.nodes[cause.id].label == "Incident 42"  # a title names it
    assert found.nodes[old.id].label == "the old rule" and found.nodes[old.id].superseded
    assert found.nodes[new.id].degree == 3
    kinds = {(e.source, e.target, e.kind, e.origin) for e in found.edges.values()}
    assert kinds == {
        (new.id, old.id, "supersedes", gv.LINK),
        (new.id, cause.id, "caused_by", gv.LINK),
        (new.id, person, "mentions", gv.GRAPH),
    }


def test_labels_are_never_raw_ids(brain: Brain) -> None:
    long = brain.add("   \n# A heading line that goes on and on well past the label's length")
    note = brain.add("body", metadata={"source_file": "Folder/My note.md"})
    hub = brain.add("hub")
    for other in (long, note):
        brain.link(hub.id, other.id, "relates_to")
    nodes = gv.neighbourhood(brain, hub.id).nodes
    assert nodes[long.id].label.startswith("A heading line") and nodes[long.id].label.endswith("…")
    assert len(nodes[long.id].label) <= 49
    assert nodes[note.id].label == "My note"


def test_depth_walks_hops_and_forgotten_traces_stay_out(brain: Brain) -> None:
    a, b, c, d = (brain.add(x).id for x in "abcd")
    brain.link(a, b, "relates_to")
    brain.link(b, c, "relates_to")
    brain.link(c, d, "relates_to")
    brain.link(a, c, "caused_by")
    assert set(gv.neighbourhood(brain, a, 1).nodes) == {a, b, c}
    assert set(gv.neighbourhood(brain, a, 2).nodes) == {a, b, c, d}
    brain.forget(c)
    assert set(gv.neighbourhood(brain, a, 3).nodes) == {a, b}
    assert set(gv.neighbourhood(brain, a, 3, include_deleted=True).nodes) == {a, b, c, d}
    with pytest.raises(NotFound):
        gv.neighbourhood(brain, c)


def test_an_expand_brings_the_best_ranked_and_leaves_the_rest_pending(brain: Brain) -> None:
    hub, leaves = _star(brain, 12)
    busy = leaves[7]
    for extra in (brain.add(f"x{i}").id for i in range(3)):
        brain.link(busy, extra, "caused_by")
    found = gv.neighbourhood(brain, hub, 1, per_node=5)
    assert busy in found.nodes  # the highest degree first
    assert len(found.nodes) == 6 and found.more[hub] == 7
    assert len(found.pending[hub]) == 7

    more = gv.expand(brain, hub, found.nodes.keys(), limit=5, pending=found.pending[hub])
    assert len(more.nodes) == 5 and not set(more.nodes) & set(found.nodes)
    assert all(hub in (e.source, e.target) for e in more.edges.values())
    assert len(more.pending[hub]) == 2


def test_by_strength_ranks_the_strongest_first(brain: Brain) -> None:
    hub = brain.add("hub").id
    weak = [brain.add(f"weak {i}", strength=0.1).id for i in range(3)]
    strong = brain.add("strong", strength=1.0).id
    for other in [*weak, strong]:
        brain.link(hub, other, "relates_to")
    found = gv.neighbourhood(brain, hub, per_node=1, rank="strength")
    assert set(found.nodes) == {hub, strong}


def test_a_hub_is_shown_but_not_walked_through(brain: Brain) -> None:
    start = brain.add("start").id
    hub, leaves = _star(brain, 8)
    brain.link(start, hub, "relates_to")
    found = gv.neighbourhood(brain, start, 2, hub_degree=5)
    assert set(found.nodes) == {start, hub}
    assert found.more[hub] == 8
    assert len(gv.neighbourhood(brain, hub, 1, hub_degree=5).nodes) == 10  # the centre is walked


def test_cross_edges_between_neighbours_are_found(brain: Brain) -> None:
    hub, leaves = _star(brain, 4)
    brain.link(leaves[0], leaves[1], "caused_by")
    found = gv.neighbourhood(brain, hub)
    assert any(e.kind == "caused_by" for e in found.edges.values())


def test_refresh_rereads_touched_nodes_and_their_edges(brain: Brain) -> None:
    hub, leaves = _star(brain, 3)
    shown = gv.neighbourhood(brain, hub).nodes.keys()
    brain.update(leaves[0], {"content": "renamed leaf"})
    brain.link(leaves[0], leaves[1], "supersedes")
    brain.purge(leaves[2])
    nodes, edges, gone = gv.refresh(brain, shown, [leaves[0], leaves[1], leaves[2]])
    assert nodes[leaves[0]].label == "renamed leaf" and nodes[leaves[1]].superseded
    assert gone == {leaves[2]}
    assert gv.link_key(leaves[0], leaves[1], "supersedes") in edges


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b, t: gv.neighbourhood(b, t, 4), "depth"),
        (lambda b, t: gv.neighbourhood(b, t, per_node=0), "per_node"),
        (lambda b, t: gv.neighbourhood(b, t, max_nodes=20_001), "max_nodes"),
        (lambda b, t: gv.neighbourhood(b, t, rank="age"), "rank"),
        (lambda b, t: gv.neighbourhood(b, ""), "id"),
        (lambda b, t: gv.expand(b, t, "not a set"), "shown"),
        (lambda b, t: gv.expand(b, t, [], pending=[1]), "pending"),
    ],
)
def test_bad_arguments_name_the_field(brain: Brain, call, field: str) -> None:
    trace = brain.add("a").id
    with pytest.raises(InvalidArgument) as error:
        call(brain, trace)
    assert error.value.field == field


def test_every_statement_is_an_index_lookup(brain: Brain) -> None:
    hub, leaves = _star(brain, 30)
    node = brain.add_node("Concept", "concept").id
    brain.db.conn.execute(
        "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
        "VALUES (?, ?, 'memory_graph', ?, 0)",
        (brain.brain_id, hub, hub),
    )
    brain.add_edge(hub, node, "mentions")

    def walk() -> None:
        found = gv.neighbourhood(brain, hub, 2, hub_degree=5)
        gv.expand(brain, leaves[0], found.nodes.keys())
        gv.refresh(brain, found.nodes.keys(), list(found.nodes))

    _result, statements = selects_run(brain.db.conn, walk)
    assert statements
    for sql, bindings in statements:
        for step in plan_of(brain.db.conn, sql, bindings):
            scans = step.startswith("SCAN") and "VIRTUAL" not in step
            # A search on the brain id alone walks every row of the brain.
            scans = scans or step.endswith("(brain_id=?)")
            assert not scans, f"{step} in {sql}"


def test_an_overview_ranks_every_linked_node_by_degree(brain: Brain) -> None:
    hub, leaves = _star(brain, 6)
    lone = brain.add("linked to nothing").id
    first = gv.overview(brain, page=0, size=3)
    assert first.linked == 7 and first.pages == 3
    assert list(first.found.nodes)[0] == hub and first.found.nodes[hub].degree == 6
    assert all(hub in (e.source, e.target) for e in first.found.edges.values())
    rest = gv.overview(brain, page=2, size=3).found.nodes
    assert len(rest) == 1 and lone not in rest
    with pytest.raises(InvalidArgument):
        gv.overview(brain, size=0)


def test_an_overview_breaks_ties_by_id_and_counts_past_its_last_page(brain: Brain) -> None:
    assert gv.overview(brain).linked == 0  # nothing linked: an empty first page
    hub, leaves = _star(brain, 4)
    ranked = [hub, *sorted(leaves)]  # every leaf has degree 1: they follow by id
    pages = [list(gv.overview(brain, page=p, size=2).found.nodes) for p in range(3)]
    assert pages == [ranked[:2], ranked[2:4], ranked[4:]]
    beyond = gv.overview(brain, page=9, size=2)
    assert beyond.linked == 5 and not beyond.found.nodes


def test_a_neighbourhood_holds_every_edge_among_its_nodes(brain: Brain) -> None:
    import random

    rng = random.Random(5)
    traces = [brain.add(f"t{i}").id for i in range(60)]
    concepts = [brain.add_node(f"c{i}", "concept").id for i in range(6)]
    with brain.batch():
        for i in range(60):
            for other in rng.sample(range(60), 2):
                if other != i:
                    brain.link(traces[i], traces[other], rng.choice(["relates_to", "caused_by"]))
        for hub in traces[:3]:  # hubs: more edges than the threshold below
            for other in rng.sample(traces, 12):
                if other != hub:
                    brain.link(hub, other, "supersedes")
        for i in range(0, 60, 2):
            gv.connect(brain, traces[i], rng.choice(concepts), "mentions")
        brain.add_edge(concepts[0], concepts[1], "related_to")
    for centre in (traces[5], traces[1], concepts[0]):
        for depth in (1, 2, 3):
            found = gv.neighbourhood(brain, centre, depth, per_node=4, hub_degree=6)
            _nodes, every, _gone = gv.refresh(brain, found.nodes, found.nodes)
            assert set(found.edges) == set(every), (centre, depth)
