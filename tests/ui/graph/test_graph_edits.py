"""Edits in the graph: link by dragging, unlink, merge, forget — each undoes to the exact
core state it started from."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.core.graph_view import edge_key, link_key
from tests.support.graph import open_graph
from tests.support.window import open_window

TABLES = ("memory_traces", "memory_links", "knowledge_nodes", "knowledge_edges")


def state(brain: Brain) -> dict[str, list]:
    """Every row a graph edit can touch, less what changes with each write (versions and
    times of the traces)."""
    conn = brain.db.conn
    return {
        "memory_traces": sorted(
            conn.execute("SELECT id, content, tags, deleted, strength FROM memory_traces")
        ),
        "memory_links": sorted(conn.execute("SELECT from_id, to_id, kind FROM memory_links")),
        "knowledge_nodes": sorted(conn.execute("SELECT id, type, label FROM knowledge_nodes")),
        "knowledge_edges": sorted(
            conn.execute("SELECT id, source_id, target_id, type FROM knowledge_edges")
        ),
    }


@pytest.fixture
def graph(qtbot, tmp_path, brain_path, ids):
    main = open_window(qtbot, tmp_path, brain_path)
    return open_graph(qtbot, main, ids["centre"])


def _undo_all(graph) -> None:
    stack = graph.session.undo_stack
    while stack.canUndo():
        stack.undo()


def test_dragging_one_memory_onto_another_links_them(graph, ids):
    brain = graph.session.brain
    before = state(brain)
    graph.edits.ask.kind = "caused_by"
    graph.canvas.link_dragged.emit(ids["old"], ids["cause"])
    assert link_key(ids["old"], ids["cause"], "caused_by") in graph.scene.edges
    assert (ids["old"], ids["cause"], "caused_by") in state(brain)["memory_links"]
    _undo_all(graph)
    assert state(brain) == before
    assert link_key(ids["old"], ids["cause"], "caused_by") not in graph.scene.edges


def test_a_drag_onto_a_knowledge_node_makes_a_typed_edge(graph, ids):
    brain = graph.session.brain
    before = state(brain)
    graph.edits.ask.kind = "about"
    graph.canvas.link_dragged.emit(ids["cause"], ids["concept"])
    edges = [e for e in graph.scene.edges.values() if e.kind == "about"]
    assert [(e.source, e.target) for e in edges] == [(ids["cause"], ids["concept"])]
    _undo_all(graph)
    assert state(brain) == before


def test_a_cancelled_kind_picker_changes_nothing(graph, ids):
    brain = graph.session.brain
    before = state(brain)
    graph.edits.ask.kind = None
    graph.canvas.link_dragged.emit(ids["old"], ids["cause"])
    assert state(brain) == before and not graph.session.undo_stack.count()


def test_unlink_removes_links_and_knowledge_edges_and_undoes(graph, ids):
    brain = graph.session.brain
    before = state(brain)
    assert graph.edits.unlink(link_key(ids["centre"], ids["cause"], "caused_by"))
    concept_edge = next(k for k, e in graph.scene.edges.items() if e.kind == "mentions")
    assert graph.edits.unlink(concept_edge)
    assert ids["cause"] not in graph.scene.nodes  # nothing joins it to the centre any more
    assert concept_edge not in graph.scene.edges
    _undo_all(graph)
    assert state(brain) == before
    assert ids["cause"] in graph.scene.nodes and concept_edge in graph.scene.edges


def test_merge_keeps_the_picked_survivor(graph, ids):
    brain = graph.session.brain
    before = state(brain)
    graph.select([ids["old"], ids["cause"]])
    graph.edits.ask.survivor_index = 1
    assert graph.edits.merge_selected()
    survivor = brain.get(ids["cause"])
    assert brain.get(ids["old"]).deleted and not survivor.deleted
    assert ids["old"] in survivor.metadata["merged_from"]
    assert ids["old"] not in graph.scene.nodes and ids["cause"] in graph.scene.nodes
    _undo_all(graph)
    assert state(brain) == before


def test_merging_knowledge_nodes_and_forgetting_one(qtbot, graph, ids):
    brain = graph.session.brain
    graph.expand(ids["concept"])
    qtbot.waitUntil(lambda: ids["person"] in graph.scene.nodes, timeout=60_000)
    before = state(brain)
    graph.select([ids["concept"], ids["person"]])
    assert graph.edits.merge_selected()
    assert ids["person"] not in graph.scene.nodes
    graph.select([ids["concept"]])
    assert graph.edits.forget_selected()
    assert ids["concept"] not in graph.scene.nodes
    assert not [e for e in state(brain)["knowledge_edges"] if ids["concept"] in e]
    _undo_all(graph)
    assert state(brain) == before


def test_forgetting_a_memory_from_the_keyboard(qtbot, graph, ids):
    brain = graph.session.brain
    before = state(brain)
    graph.select([ids["peer"]])
    graph.canvas.setFocus()
    qtbot.keyClick(graph.canvas, Qt.Key.Key_Delete)
    assert brain.get(ids["peer"]).deleted and ids["peer"] not in graph.scene.nodes
    _undo_all(graph)
    assert state(brain) == before and ids["peer"] in graph.scene.nodes


def test_linking_from_the_keyboard(qtbot, graph, ids):
    graph.select([ids["old"]])
    graph.edits.ask.node_id = ids["peer"]
    graph.edits.ask.kind = "relates_to"
    graph.canvas.setFocus()
    qtbot.keyClick(graph.canvas, Qt.Key.Key_L)
    first, second = sorted((ids["old"], ids["peer"]))
    assert link_key(first, second, "relates_to") in graph.scene.edges
    assert edge_key("x") not in graph.scene.edges
