"""Links between traces and the knowledge graph."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.links import SNIPPET_CHARS, snippet
from tests.support.brains import mentioning


def test_link_is_idempotent_and_relates_to_is_symmetric(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    assert brain.link(b.id, a.id, "relates_to")
    assert not brain.link(a.id, b.id, "relates_to")  # same link, other order
    rows = brain.db.conn.execute("SELECT from_id, to_id FROM memory_links").fetchall()
    assert rows == [tuple(sorted((a.id, b.id)))]
    assert brain.unlink(a.id, b.id, "relates_to")
    assert not brain.unlink(a.id, b.id, "relates_to")


def test_unlink_reports_a_missing_edge_and_writes_nothing(brain: Brain) -> None:
    new, old = brain.add("new"), brain.add("old")
    brain.link(new.id, old.id, "supersedes")
    journal_before = brain.last_journal_id()
    assert not brain.unlink(old.id, new.id, "supersedes")  # directed: wrong way round
    assert not brain.unlink(new.id, old.id, "caused_by")  # another kind
    assert brain.last_journal_id() == journal_before
    assert brain.unlink(new.id, old.id, "supersedes")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda b, t: b.link("", t, "relates_to"), "from_id"),
        (lambda b, t: b.unlink(t, "", "relates_to"), "to_id"),
        (lambda b, t: b.neighbours(""), "id"),
    ],
)
def test_empty_ids_are_invalid(brain: Brain, call, field: str) -> None:
    t = brain.add("a").id
    with pytest.raises(InvalidArgument, match=f"{field} must be a non-empty .*id \\(got ''\\)"):
        call(brain, t)


def test_related_reads_the_kind_from_each_side(brain: Brain) -> None:
    new, old, cause = brain.add("new rule"), brain.add("old rule"), brain.add("incident")
    brain.link(new.id, old.id, "supersedes")
    brain.link(new.id, cause.id, "caused_by")
    from_new = {(r.id, r.kind, r.direction) for r in brain.related(new.id)}
    assert from_new == {(old.id, "supersedes", "out"), (cause.id, "caused_by", "out")}
    assert [(r.kind, r.direction) for r in brain.related(old.id)] == [("superseded_by", "in")]
    assert [(r.kind, r.direction) for r in brain.related(cause.id)] == [("caused", "in")]


def test_related_is_capped_newest_first_with_snippets(brain: Brain) -> None:
    now = [1_000]
    brain.clock = lambda: now[0]
    hub = brain.add("hub")
    others = []
    for i in range(12):
        now[0] += 10
        other = brain.add(f"other {i} " + "x" * 200)
        brain.link(hub.id, other.id, "caused_by")
        others.append(other)
    related = brain.related(hub.id)
    assert len(related) == 10
    assert related[0].id == others[-1].id
    assert related[0].snippet.endswith("…") and len(related[0].snippet) == 161
    short = brain.add("short")
    brain.link(hub.id, short.id, "relates_to")
    assert brain.related(hub.id)[0].snippet == "short"


@pytest.mark.parametrize(
    "tail",
    [
        "\U0001f469\u200d\U0001f4bb",  # a ZWJ emoji
        "\U0001f44d\U0001f3fd",  # a skin tone
        "e\u0301\u0301",  # combining accents
        "\u2764\ufe0f",  # a variation selector
    ],
)
def test_a_snippet_never_splits_a_character_sequence(tail: str) -> None:
    for at in range(SNIPPET_CHARS - len(tail), SNIPPET_CHARS + 1):
        text = "a" * at + tail + "b" * 50
        cut = snippet(text)
        assert cut.endswith("…") and len(cut) <= SNIPPET_CHARS + 1
        kept = cut[:-1]
        assert kept == text[: len(kept)]
        assert kept.endswith("a") or kept.endswith(tail) or kept.endswith("b"), repr(kept[-4:])


def test_link_rejects_bad_input(brain: Brain) -> None:
    a = brain.add("a")
    with pytest.raises(InvalidArgument, match="to_id must differ from from_id"):
        brain.link(a.id, a.id, "relates_to")
    with pytest.raises(
        InvalidArgument,
        match=r"kind must be one of relates_to, supersedes, caused_by \(got 'blocks'\)",
    ):
        brain.link(a.id, "x", "blocks")
    with pytest.raises(NotFound) as err:
        brain.link(a.id, "mt_missing", "relates_to")
    assert err.value.missing_id == "mt_missing"
    assert brain.db.conn.execute("SELECT count(*) FROM memory_links").fetchone()[0] == 0


def test_graph_nodes_edges_and_neighbours(brain: Brain) -> None:
    alice = brain.add_node("Alice", "person").id
    acme = brain.add_node("Acme", "organization").id
    paris = brain.add_node("Paris", "place").id
    brain.add_edge(alice, acme, "works_at")
    brain.add_edge(acme, paris, "located_in")
    one = brain.neighbours(alice, depth=1)
    assert [(n.label, n.node_type, n.edge_type, n.hop) for n in one] == [
        ("Acme", "organization", "works_at", 1)
    ]
    two = brain.neighbours(alice, depth=2)
    assert [(n.label, n.hop) for n in two] == [("Acme", 1), ("Paris", 2)]
    assert {n.label for n in brain.neighbours(paris, depth=3)} == {"Acme", "Alice"}
    assert len(brain.nodes()) == 3 and len(brain.edges()) == 2


def test_neighbours_say_what_they_hang_off_and_which_memory_they_are(brain: Brain) -> None:
    first = brain.add("The build uses Python 3.11")
    second = brain.add("Scripts are Python, never Bash")
    mentioning(brain, "Python", [first, second])
    found = brain.neighbours(first.id, depth=2)
    assert [(n.label, n.hop, n.via, n.trace_id) for n in found] == [
        ("Python", 1, "", None),
        ("Scripts are Python, ", 2, "Python", second.id),
    ]


def test_neighbours_are_the_nearest_up_to_a_limit(brain: Brain) -> None:
    hub = brain.add_node("hub", "thing").id
    near = [brain.add_node(f"near {i}", "thing").id for i in range(3)]
    for node in near:
        brain.add_edge(hub, node, "has")
    far = brain.add_node("far", "thing").id
    brain.add_edge(near[0], far, "has")
    assert len(brain.neighbours(hub, depth=2)) == 4
    nearest = brain.neighbours(hub, depth=2, limit=3)
    assert sorted(n.label for n in nearest) == ["near 0", "near 1", "near 2"]
    for bad in (0, 5001, True, "3"):
        with pytest.raises(InvalidArgument, match="limit must be"):
            brain.neighbours(hub, depth=1, limit=bad)


@pytest.mark.parametrize("depth", [0, 4, -1])
def test_neighbours_depth_is_bounded(brain: Brain, depth: int) -> None:
    node = brain.add_node("n", "thing").id
    with pytest.raises(InvalidArgument, match=rf"depth must be between 1 and 3 \(got {depth}\)"):
        brain.neighbours(node, depth=depth)


def test_graph_rejects_unknown_nodes(brain: Brain) -> None:
    node = brain.add_node("n", "thing").id
    with pytest.raises(NotFound, match="missing_id='kn_nope'"):
        brain.add_edge(node, "kn_nope", "rel")
    with pytest.raises(NotFound):
        brain.neighbours("nothing-here")
    with pytest.raises(InvalidArgument, match="label must be a non-empty string"):
        brain.add_node("", "thing")


def test_neighbours_of_an_agentos_trace(agentos_copy) -> None:
    with Brain.open(agentos_copy) as brain:
        edge = brain.db.conn.execute(
            "SELECT source_id FROM knowledge_edges WHERE source_id LIKE 'mt_%' LIMIT 1"
        ).fetchone()
        assert edge is not None
        found = brain.neighbours(edge[0], depth=1)
        assert found and all(n.hop == 1 for n in found)
