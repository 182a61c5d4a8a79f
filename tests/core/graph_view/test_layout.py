"""The graph view's layout: deterministic for a graph, stable when nodes are added."""

from __future__ import annotations

import math

from memgui.core.graph_view import layout
from memgui.core.graph_view.layout import LayoutProgress
from memgui.core.progress import run_to_end


def _tree(count: int, prefix: str = "n") -> tuple[list[str], list[tuple[str, str]]]:
    ids = [f"{prefix}{i:04d}" for i in range(count)]
    edges = [(ids[(i - 1) // 3], ids[i]) for i in range(1, count)]
    edges += [(ids[i], ids[(i * 7) % count]) for i in range(0, count, 5) if (i * 7) % count != i]
    return ids, edges


def test_the_same_graph_gives_the_same_positions() -> None:
    ids, edges = _tree(300)
    first = run_to_end(layout.lay_out(ids, edges, {}, centre=ids[0]))
    again = run_to_end(layout.lay_out(list(reversed(ids)), list(reversed(edges)), {}, ids[0]))
    assert first == again
    assert len(first) == 300
    assert all(math.isfinite(x) and math.isfinite(y) for x, y in first.values())


def test_placed_nodes_never_move_when_nodes_are_added() -> None:
    ids, edges = _tree(200)
    placed = run_to_end(layout.lay_out(ids, edges, {}, centre=ids[0]))
    more, more_edges = _tree(60, prefix="x")
    joined = [(ids[i * 3], more[i]) for i in range(60)]
    after = run_to_end(layout.lay_out(ids + more, edges + more_edges + joined, placed))
    assert all(after[i] == placed[i] for i in ids)
    # the new ones sit near what they join, not on top of each other
    for i in range(60):
        x0, y0 = after[ids[i * 3]]
        x1, y1 = after[more[i]]
        assert math.hypot(x1 - x0, y1 - y0) < 20 * layout.EDGE_LENGTH
    spots = {(round(x), round(y)) for x, y in after.values()}
    assert len(spots) == len(after)


def test_linked_nodes_end_nearer_than_unlinked_ones() -> None:
    ids, edges = _tree(150)
    pos = run_to_end(layout.lay_out(ids, edges, {}, centre=ids[0]))
    linked = [math.dist(pos[a], pos[b]) for a, b in edges]
    apart = [math.dist(pos[ids[i]], pos[ids[-1 - i]]) for i in range(50)]
    assert sorted(linked)[len(linked) // 2] < sorted(apart)[len(apart) // 2]


def test_nodes_joined_to_nothing_get_a_place_of_their_own() -> None:
    pos = layout.seed(["a", "b", "c", "d"], [("a", "b")], {"a": (0.0, 0.0)})
    assert set(pos) == {"a", "b", "c", "d"} and pos["a"] == (0.0, 0.0)
    assert len({pos[k] for k in pos}) == 4


def test_refine_posts_positions_as_it_goes() -> None:
    ids, edges = _tree(120)
    job = layout.refine(ids, edges, layout.seed(ids, edges, {}), [], post_every_s=0.0)
    steps = []
    result = run_to_end(job, steps.append)
    assert all(isinstance(s, LayoutProgress) and s.xy is not None for s in steps)
    assert len(steps) > 10 and steps[-1].ids == tuple(sorted(ids))
    # One ids tuple for every step: the window maps it to its rows once, not 30 times a second.
    assert all(s.ids is steps[0].ids for s in steps)
    last = zip(steps[-1].ids, steps[-1].xy, strict=True)
    assert {i: (float(x), float(y)) for i, (x, y) in last} == result
