"""The graph window: opened on a memory, in step with the table, the core and other programs."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolBar

from memgui.core.brain import Brain
from memgui.core.graph_view import link_key
from memgui.ui import commands as cmd
from tests.support.graph import core_view, open_graph, wait_graph
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window


@pytest.fixture
def main(qtbot, tmp_path, brain_path, ids):
    return open_window(qtbot, tmp_path, brain_path)


def test_ctrl_g_opens_the_graph_on_the_selected_memory(qtbot, main, ids):
    assert main.select_id(ids["centre"])
    main.graph.action.trigger()
    graph = main.graph.graph_window
    wait_graph(qtbot, graph)
    assert set(graph.scene.nodes) == {ids[k] for k in ("centre", "old", "cause", "peer", "concept")}
    assert graph.scene.nodes[ids["old"]].superseded
    assert link_key(ids["centre"], ids["old"], "supersedes") in graph.scene.edges
    assert graph.selected == [ids["centre"]]
    assert main.graph.action in main.table.actions()  # the table's context menu has it
    toolbar = main.findChild(QToolBar, "main_toolbar")
    assert main.graph.action in toolbar.actions()  # and the toolbar
    view_menu = next(a.menu() for a in main.menuBar().actions() if a.text() == "&View")
    assert main.graph.action in view_menu.actions()  # and View ▸ Graph


def test_expand_brings_the_next_hop_without_moving_what_is_placed(qtbot, main, ids):
    graph = open_graph(qtbot, main, ids["centre"])
    before = graph.scene.positions()
    graph.select([ids["peer"]])
    qtbot.keyClick(graph.canvas, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ids["far"] in graph.scene.nodes, timeout=WAIT_MS)
    wait_graph(qtbot, graph)
    after = graph.scene.positions()
    assert all(after[i] == before[i] for i in before)
    assert ids["far"] in after


def test_selection_is_one_with_the_table_and_the_detail_pane(qtbot, main, ids):
    graph = open_graph(qtbot, main, ids["centre"])
    graph.select([ids["cause"]])
    assert main.current_id() == ids["cause"]
    assert main.detail.trace is not None and main.detail.trace.id == ids["cause"]
    main.select_id(ids["old"])
    assert graph.selected == [ids["old"]]
    row = graph.node_model.row_of(ids["peer"])
    graph.node_table.selectRow(row)
    assert graph.selected == [ids["peer"]] and main.current_id() == ids["peer"]


def test_the_lists_pass_the_model_tester(qtbot, main, ids, qtmodeltester):
    graph = open_graph(qtbot, main, ids["centre"])
    assert graph.node_model.rowCount() == 5 and graph.edge_model.rowCount() == 4
    qtmodeltester.check(graph.node_model)
    qtmodeltester.check(graph.edge_model)


def test_the_scene_mirrors_every_core_change(qtbot, main, ids):
    graph = open_graph(qtbot, main, ids["centre"])
    brain = main.session.brain

    def mirrored() -> bool:
        nodes, edges = core_view(brain, graph)
        return set(graph.scene.nodes) == nodes and set(graph.scene.edges) == edges

    assert mirrored()
    session, stack = main.session, main.session.undo_stack
    added = cmd.push(session, cmd.NewTraceCommand(session, {"content": "a new note"}))
    cmd.push(session, cmd.LinkCommand(session, ids["centre"], added.id, "relates_to", True))
    assert added.id in graph.scene.nodes and mirrored()  # add, link
    trace = brain.get(ids["cause"])
    cmd.push(
        session, cmd.SaveTraceCommand(session, trace.id, {"content": "Renamed"}, trace.version)
    )
    assert graph.scene.nodes[ids["cause"]].label == "Renamed" and mirrored()  # edit
    cmd.push(session, cmd.SetDeletedCommand(session, [ids["old"]], True))
    assert ids["old"] not in graph.scene.nodes and mirrored()  # forget
    cmd.push(session, cmd.MergeCommand(session, [ids["peer"], added.id], None))
    assert mirrored()  # merge
    while stack.canUndo():  # revert, step by step
        stack.undo()
        qtbot.waitUntil(mirrored, timeout=WAIT_MS)
    assert ids["old"] in graph.scene.nodes and added.id not in graph.scene.nodes


def test_another_programs_write_appears_within_a_second(qtbot, tmp_path, brain_path, ids):
    main = open_window(qtbot, tmp_path, brain_path, live=True)
    graph = open_graph(qtbot, main, ids["centre"])
    placed = graph.scene.positions()
    with Brain.open(brain_path, actor="mcp:agent") as other:
        new = other.add("An agent's note about Friday deploys").id
        other.link(ids["centre"], new, "relates_to")
    qtbot.waitUntil(lambda: new in graph.scene.nodes, timeout=WAIT_MS)
    now = graph.scene.positions()
    assert all(now[i] == placed[i] for i in placed)
    main.close()
