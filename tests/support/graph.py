"""The graph window in tests: a brain with links and a knowledge graph, answers to its
questions, and waits for its jobs."""

from __future__ import annotations

from memgui.core import graph_view
from memgui.core.brain import Brain
from memgui.core.graph_view import neighbourhood
from tests.support.waiting import WAIT_MS


class GraphAnswers:
    """Fixed answers to the graph window's questions."""

    def __init__(self) -> None:
        self.kind: str | None = "relates_to"
        self.survivor_index = 0
        self.node_id: str | None = None
        self.edge_key: str | None = None

    def link_kind(self, _source, _target, kinds):
        return self.kind

    def survivor(self, nodes):
        return nodes[self.survivor_index].id

    def node(self, _title, _nodes):
        return self.node_id

    def edge(self, _title, edges):
        return self.edge_key if self.edge_key is not None else edges[0][0]


def linked_brain(brain: Brain) -> dict[str, str]:
    """A centre memory with four linked memories, a concept and a person node."""
    ids = {
        name: brain.add(text, tags=tags).id
        for name, text, tags in (
            ("centre", "The deploy checklist for Fridays", ["deploy"]),
            ("old", "The old deploy checklist", ["deploy"]),
            ("cause", "An outage on a Friday", ["incident"]),
            ("peer", "Release notes are written by the on-call", []),
            ("far", "The on-call rota lives in the wiki", []),
        )
    }
    brain.link(ids["centre"], ids["old"], "supersedes")
    brain.link(ids["centre"], ids["cause"], "caused_by")
    brain.link(ids["centre"], ids["peer"], "relates_to")
    brain.link(ids["peer"], ids["far"], "relates_to")
    ids["concept"] = brain.add_node("Deploys", "concept").id
    ids["person"] = brain.add_node("Alice", "person").id
    graph_view.connect(brain, ids["centre"], ids["concept"], "mentions")
    brain.add_edge(ids["concept"], ids["person"], "owned_by")
    return ids


def open_graph(qtbot, window, trace_id: str):
    graph = window.graph.open(trace_id)
    graph.edits.ask = GraphAnswers()
    wait_graph(qtbot, graph)
    return graph


def wait_graph(qtbot, graph) -> None:
    qtbot.waitUntil(lambda: bool(graph.scene.nodes) and not graph.controller.busy, timeout=WAIT_MS)


def core_view(brain: Brain, graph) -> tuple[set[str], set[str]]:
    """What a fresh query of the core says the window should show: the neighbourhood of
    every node the window expanded."""
    nodes: set[str] = set()
    edges: set[str] = set()
    for expanded in graph.scene.expanded:
        if expanded not in graph.scene.nodes:
            continue
        found = neighbourhood(brain, expanded, 1)
        nodes |= set(found.nodes)
        edges |= set(found.edges)
    shown = nodes
    extra = {k for k, e in all_edges(brain, shown).items()}
    return shown, edges | extra


def all_edges(brain: Brain, ids: set[str]) -> dict:
    from memgui.core.graph_view import refresh

    _nodes, edges, _gone = refresh(brain, ids, ids)
    return edges
