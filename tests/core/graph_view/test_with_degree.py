"""`with_degree` is `dataclasses.replace(node, degree=…)`, field for field."""

from __future__ import annotations

from dataclasses import fields, replace

from memgui.core.graph_view import TRACE, GraphNode
from memgui.core.graph_view.shapes import with_degree


def test_with_degree_keeps_every_other_field() -> None:
    node = GraphNode(
        id="t1",
        kind=TRACE,
        label="a label",
        type="semantic",
        scope="thread",
        scope_id="s-9",
        category="fact",
        tags=("a", "b"),
        strength=0.25,
        retrieval_count=7,
        created_at=11,
        last_accessed=12,
        deleted=True,
        superseded=True,
        degree=3,
    )
    assert with_degree(node, 42) == replace(node, degree=42)
    # Every field was given a value unlike its default: a field added later and not passed
    # on by with_degree would fail here.
    defaults = GraphNode("x", TRACE, "", "")
    for f in fields(GraphNode):
        if f.name not in ("id", "kind", "label", "type"):
            assert getattr(node, f.name) != getattr(defaults, f.name), f.name
