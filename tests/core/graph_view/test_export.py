"""The graph as GraphML and GEXF, read back by their schemas' rules: every node with its
attributes, every edge between exported nodes with its kind and its direction (a mixed
graph, which Gephi opens: `relates_to` undirected, the other kinds directed). The whole
graph's export says the same of a SQLite file and of a shared brain on a real PostgreSQL."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memgui.core import graph_view as gv
from memgui.core.brain import Brain
from memgui.core.engines import open_store
from memgui.core.errors import InvalidArgument
from memgui.core.progress import Cancelled, run_to_end


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def either(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A brain on each engine: a file, and a shared brain on a real server."""
    if request.param == "sqlite":
        opened = open_store(tmp_path / "brain.sqlite", "team", actor="test")
    else:
        opened = open_store(request.getfixturevalue("pg_address"), actor="test")
    yield opened
    opened.close()


def _brain(brain: Any) -> dict[str, str]:
    ids = {
        "a": brain.add("Alpha <memory> & friends\x01", tags=["x", "y"]).id,
        "b": brain.add("Beta").id,
        "c": brain.add("Gamma").id,
        "gone": brain.add("Forgotten").id,
    }
    brain.link(ids["a"], ids["b"], "relates_to")
    brain.link(ids["b"], ids["c"], "supersedes")
    brain.link(ids["a"], ids["gone"], "caused_by")
    ids["concept"] = brain.add_node("Topic", "concept").id
    gv.connect(brain, ids["a"], ids["concept"], "mentions")
    brain.forget(ids["gone"])
    return ids


class Read:
    """A graph file as nodes {id: attributes} and edges [(source, target, directed, kind)]."""

    def __init__(self, path: Path, fmt: str) -> None:
        root = ET.parse(path).getroot()
        ns = {"g": root.tag[1:].split("}")[0]}
        self.nodes: dict[str, dict[str, str]] = {}
        self.edges: list[tuple[str, str, bool, str]] = []
        if fmt == "graphml":
            names = {k.get("id"): k.get("attr.name") for k in root.iterfind("g:key", ns)}
            for node in root.iterfind("g:graph/g:node", ns):
                data = {names[d.get("key")]: d.text or "" for d in node.iterfind("g:data", ns)}
                self.nodes[node.get("id")] = data
            for edge in root.iterfind("g:graph/g:edge", ns):
                data = {names[d.get("key")]: d.text or "" for d in edge.iterfind("g:data", ns)}
                directed = edge.get("directed", "true") == "true"
                self.edges.append((edge.get("source"), edge.get("target"), directed, data["kind"]))
            return
        titles = {
            (a.get("id"), c.get("class")): a.get("title")
            for c in root.iterfind("g:graph/g:attributes", ns)
            for a in c.iterfind("g:attribute", ns)
        }
        for node in root.iterfind("g:graph/g:nodes/g:node", ns):
            data = {
                titles[(v.get("for"), "node")]: v.get("value")
                for v in node.iterfind("g:attvalues/g:attvalue", ns)
            }
            self.nodes[node.get("id")] = data | {"label": node.get("label")}
        for edge in root.iterfind("g:graph/g:edges/g:edge", ns):
            directed = edge.get("type") == "directed"
            self.edges.append((edge.get("source"), edge.get("target"), directed, edge.get("label")))


@pytest.mark.parametrize("fmt", gv.EXPORT_FORMATS)
def test_the_whole_graph_reads_back_with_its_attributes(either: Any, tmp_path: Path, fmt) -> None:
    ids = _brain(either)
    path = tmp_path / f"g.{fmt}"
    counts = run_to_end(gv.export_whole(either, path, fmt))
    graph = Read(path, fmt)
    assert counts == {"nodes": 4, "edges": 3}
    assert set(graph.nodes) == {ids["a"], ids["b"], ids["c"], ids["concept"]}  # live only
    first, second = sorted((ids["a"], ids["b"]))
    assert sorted(graph.edges) == sorted(
        [
            (first, second, False, "relates_to"),
            (ids["b"], ids["c"], True, "supersedes"),
            (ids["a"], ids["concept"], True, "mentions"),
        ]
    )
    alpha = graph.nodes[ids["a"]]
    assert alpha["label"] == "Alpha <memory> & friends\ufffd"  # XML holds no control character
    assert alpha["kind"] == "trace" and alpha["tags"] == "x y"
    assert graph.nodes[ids["c"]]["superseded"] == "true"
    assert graph.nodes[ids["concept"]]["kind"] == "node"


@pytest.mark.parametrize("fmt", gv.EXPORT_FORMATS)
def test_the_shown_graph_is_what_the_view_holds(brain: Brain, tmp_path: Path, fmt) -> None:
    ids = _brain(brain)
    found = gv.neighbourhood(brain, ids["a"])
    path = tmp_path / f"shown.{fmt}"
    assert gv.write_shown(path, fmt, found.nodes.values(), found.edges.values()) == 2
    graph = Read(path, fmt)
    assert set(graph.nodes) == set(found.nodes)
    assert {kind for _a, _b, _d, kind in graph.edges} == {"relates_to", "mentions"}


def test_a_bad_format_or_a_cancel_leaves_no_file(either: Any, tmp_path: Path) -> None:
    _brain(either)
    with pytest.raises(InvalidArgument) as error:
        gv.write_shown(tmp_path / "x.dot", "dot", [], [])
    assert error.value.field == "format"
    path = tmp_path / "g.graphml"
    with pytest.raises(Cancelled):
        run_to_end(gv.export_whole(either, path, "graphml", cancelled=lambda: True))
    assert [p.name for p in tmp_path.iterdir() if "brain" not in p.name] == []


def test_pages_of_two_export_the_same_graph(
    either: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgui.core.graph_view import export

    ids = _brain(either)
    extra = [either.add(f"more {i}").id for i in range(3)]
    for one, other in zip(extra, extra[1:], strict=False):
        either.link(one, other, "relates_to")
    either.link(extra[0], ids["a"], "caused_by")
    whole = run_to_end(gv.export_whole(either, tmp_path / "one.graphml", "graphml"))
    monkeypatch.setattr(export, "PAGE", 2)
    paged = run_to_end(gv.export_whole(either, tmp_path / "paged.graphml", "graphml"))
    assert paged == whole == {"nodes": 7, "edges": 6}
    one, two = (Read(tmp_path / f"{n}.graphml", "graphml") for n in ("one", "paged"))
    labels = [{i: n["label"] for i, n in g.nodes.items()} for g in (one, two)]
    assert labels[0] == labels[1] and sorted(one.edges) == sorted(two.edges)
