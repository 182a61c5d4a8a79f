"""The graph window on a shared brain (a real PostgreSQL), through the same UI as on a file:
opened on a memory, expanded, filtered, paged as an overview; its edits (link by drag, a
typed edge, unlink, merge, forget) each undo to the exact rows on the server; another
writer's link to a shown memory arrives without moving what is placed; positions are kept
per brain by its address (no password in the file's name); the graph exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from memgui.core import graph_view as gv
from memgui.core.graph_view import edge_key, link_key
from memgui.core.shared_brain import SharedBrain
from memgui.ui.graph.graph_opening import positions_folder
from tests.support.graph import GraphAnswers, linked_brain, wait_graph
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def ids(pg_address: str) -> dict[str, str]:
    with SharedBrain.open(pg_address, actor="test") as brain:
        found = linked_brain(brain)  # type: ignore[arg-type]
        for i in range(5):
            brain.add(f"an unlinked note {i}")
        return found


def state(brain: SharedBrain) -> dict[str, list[tuple[Any, ...]]]:
    """Every row a graph edit can touch on the server, less versions and times."""
    queries = {
        "memory_traces": "SELECT id, content, tags, deleted, strength FROM memory_traces",
        "memory_links": "SELECT from_id, to_id, kind FROM memory_links",
        "knowledge_nodes": "SELECT id, type, label FROM knowledge_nodes",
        "knowledge_edges": "SELECT id, source_id, target_id, type FROM knowledge_edges",
    }
    return {
        table: sorted(brain.conn.execute(f"{sql} WHERE brain_id = %s", (brain.brain_id,)))
        for table, sql in queries.items()
    }


def open_on(qtbot, window, trace_id: str):
    assert window.graph.action.isEnabled() and window.select_id(trace_id)
    window.graph.action.trigger()  # Ctrl+G, as on a file
    graph = window.graph.graph_window
    graph.edits.ask = GraphAnswers()
    wait_graph(qtbot, graph)
    return graph


def undo_all(graph) -> None:
    stack = graph.session.undo_stack
    while stack.canUndo():
        stack.undo()


def test_open_expand_filter_and_overview(qtbot, tmp_path: Path, pg_address: str, ids) -> None:
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        graph = open_on(qtbot, window, ids["centre"])
        shown = {ids[k] for k in ("centre", "old", "cause", "peer", "concept")}
        assert set(graph.scene.nodes) == shown
        assert graph.scene.nodes[ids["old"]].superseded
        assert link_key(ids["centre"], ids["old"], "supersedes") in graph.scene.edges
        before = graph.scene.positions()
        graph.select([ids["peer"]])
        qtbot.keyClick(graph.canvas, Qt.Key.Key_Return)  # expand
        qtbot.waitUntil(lambda: ids["far"] in graph.scene.nodes, timeout=WAIT_MS)
        wait_graph(qtbot, graph)
        after = graph.scene.positions()
        assert all(after[i] == before[i] for i in before)
        panel = graph.panel
        types = panel.types
        row = next(r for r in range(types.count()) if types.item(r).text() == "concept")
        types.item(row).setCheckState(Qt.CheckState.Unchecked)
        assert ids["concept"] not in graph.node_model.ids
        assert "1 hidden by the filters" in graph.counts.text()
        types.item(row).setCheckState(Qt.CheckState.Checked)
        graph.open_overview(0)
        qtbot.waitUntil(
            lambda: graph.overview is not None and not graph.controller.busy, timeout=WAIT_MS
        )
        assert graph.scene.nodes.keys() == set(ids.values())  # every linked node, no other
        assert "Showing 7 of 7 linked nodes" in graph.badge.text()
    finally:
        window.close()


def test_edits_undo_to_the_exact_rows_on_the_server(
    qtbot, tmp_path: Path, pg_address: str, ids
) -> None:
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        graph = open_on(qtbot, window, ids["centre"])
        with SharedBrain.open(pg_address, actor="check") as check:
            before = state(check)
            graph.edits.ask.kind = "caused_by"
            graph.canvas.link_dragged.emit(ids["old"], ids["cause"])  # link by drag
            assert (ids["old"], ids["cause"], "caused_by") in state(check)["memory_links"]
            assert link_key(ids["old"], ids["cause"], "caused_by") in graph.scene.edges
            graph.edits.ask.kind = "about"
            graph.canvas.link_dragged.emit(ids["cause"], ids["concept"])  # a typed edge
            edges = state(check)["knowledge_edges"]
            assert [(s, t) for _i, s, t, k in edges if k == "about"] == [
                (ids["cause"], ids["concept"])
            ]
            first, second = sorted((ids["centre"], ids["peer"]))  # relates_to: either way
            assert graph.edits.unlink(link_key(first, second, "relates_to"))
            assert ids["peer"] not in graph.scene.nodes  # nothing joins it to the centre now
            graph.select([ids["old"], ids["cause"]])
            graph.edits.ask.survivor_index = 1
            assert graph.edits.merge_selected()
            assert check.get(ids["old"]).deleted and not check.get(ids["cause"]).deleted
            assert ids["old"] not in graph.scene.nodes
            graph.expand(ids["concept"])
            qtbot.waitUntil(lambda: ids["person"] in graph.scene.nodes, timeout=WAIT_MS)
            wait_graph(qtbot, graph)
            graph.select([ids["concept"], ids["person"]])
            graph.edits.ask.survivor_index = 0
            assert graph.edits.merge_selected()  # knowledge nodes
            assert ids["person"] not in {n[0] for n in state(check)["knowledge_nodes"]}
            graph.select([ids["concept"]])
            assert graph.edits.forget_selected()
            assert not [e for e in state(check)["knowledge_edges"] if ids["concept"] in e]
            graph.select([ids["cause"]])
            assert graph.edits.forget_selected()
            assert check.get(ids["cause"]).deleted
            undo_all(graph)
            assert state(check) == before
            assert "Could not" not in window.statusBar().currentMessage()
    finally:
        window.close()


def test_another_writers_link_arrives_without_moving_the_rest(
    qtbot, tmp_path: Path, pg_address: str, ids
) -> None:
    window = open_shared_window(qtbot, tmp_path, pg_address, live=True)
    try:
        graph = open_on(qtbot, window, ids["centre"])
        placed = graph.scene.positions()
        with SharedBrain.open(pg_address, actor="agentos") as other:
            new = other.add("An agent's note about Friday deploys").id
            other.link(ids["centre"], new, "relates_to")
            qtbot.waitUntil(lambda: new in graph.scene.nodes, timeout=WAIT_MS)
            wait_graph(qtbot, graph)
            now = graph.scene.positions()
            assert all(now[i] == placed[i] for i in placed)
            other.unlink(ids["centre"], ids["cause"], "caused_by")
            qtbot.waitUntil(
                lambda: link_key(ids["centre"], ids["cause"], "caused_by") not in graph.scene.edges,
                timeout=WAIT_MS,
            )
            # The knowledge graph's writes are heard too (layout 7's triggers).
            topic = other.add_node("Release train", "concept").id
            edge = other.add_edge(ids["centre"], topic, "about").id
            qtbot.waitUntil(lambda: topic in graph.scene.nodes, timeout=WAIT_MS)
            assert edge_key(edge) in graph.scene.edges
            mentions = next(k for k, e in graph.scene.edges.items() if e.kind == "mentions")
            gv.remove_edge(other, mentions.removeprefix("edge|"))  # type: ignore[arg-type]
            qtbot.waitUntil(lambda: mentions not in graph.scene.edges, timeout=WAIT_MS)
    finally:
        window.close()


def test_positions_are_kept_by_address_and_the_graph_exports(
    qtbot, tmp_path: Path, pg_address: str, ids
) -> None:
    window = open_shared_window(qtbot, tmp_path, pg_address)
    graph = open_on(qtbot, window, ids["centre"])
    graph.scene.move(ids["old"], 999.0, -999.0)  # as a Shift-drag leaves it
    graph.controller.node_moved(ids["old"])
    placed = graph.scene.positions()
    store = graph.controller.positions
    assert store.path.parent == positions_folder(window.settings)
    assert "postgresql" not in store.path.name and store.path.suffix == ".json"
    shown = tmp_path / "shown.graphml"
    graph.export.export(shown, "graphml", whole=False)
    text = shown.read_text(encoding="utf-8")
    assert text.count("<node ") == 5 and text.count("<edge ") == 4
    whole = tmp_path / "whole.gexf"
    job = graph.export.export(whole, "gexf", whole=True)
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS):
        pass
    assert whole.read_text(encoding="utf-8").count("<node ") == 12  # 10 memories, 2 nodes
    window.close()
    assert store.flush(timeout=WAIT_MS / 1000) and store.error is None
    on_disk = json.loads(store.path.read_text(encoding="utf-8"))
    assert {i: tuple(p) for i, p in on_disk.items()} == placed
    again = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        reopened = open_on(qtbot, again, ids["centre"])
        assert reopened.controller.positions.path == store.path
        assert reopened.scene.positions() == placed
    finally:
        again.close()


def test_screenshots_of_a_shared_brains_graph_and_consolidation(
    qapp, capsys, tmp_path: Path, pg_address: str, ids
) -> None:
    from PySide6.QtGui import QImage

    from tests.support.cli import run_cli

    graph_png, plan_png, main_png = (tmp_path / f"{n}.png" for n in ("graph", "plan", "main"))
    argv = ("screenshot", str(graph_png), "--view", "graph", "--select", ids["centre"])
    shot = run_cli(capsys, pg_address, *argv, "--size", "900x600")  # --brain ADDRESS
    assert shot.code == 0, shot.err
    assert shot.json() == {"screenshot": str(graph_png), "brain": pg_address}
    image = QImage(str(graph_png))
    assert (image.width(), image.height()) == (900, 600)
    colours = {image.pixel(x, y) for x in range(0, 900, 31) for y in range(0, 600, 23)}
    assert len(colours) > 5  # drew something, not a blank rectangle
    plan = run_cli(capsys, tmp_path / "unused.sqlite", "screenshot", pg_address, str(plan_png),
                   "--consolidate")  # fmt: skip
    assert plan.code == 0, plan.err
    assert plan.json()["brain"] == pg_address and plan.json()["plan"]["merge"] >= 0
    assert not QImage(str(plan_png)).isNull()
    assert run_cli(capsys, pg_address, "screenshot", str(main_png)).code == 0
    assert not QImage(str(main_png)).isNull()
