"""The graph window's filters, search, kept positions, export and screenshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from memgui.ui.graph.graph_filters import GraphFilter, node_mask
from memgui.ui.screenshot import render
from tests.support.graph import open_graph, wait_graph
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window


@pytest.fixture
def graph(qtbot, tmp_path, brain_path, ids):
    return open_graph(qtbot, open_window(qtbot, tmp_path, brain_path), ids["centre"])


def test_filters_hide_nodes_and_edge_kinds_and_the_lists_follow(graph, ids):
    panel = graph.panel
    assert graph.node_model.rowCount() == 5
    row = next(r for r in range(panel.types.count()) if panel.types.item(r).text() == "concept")
    panel.types.item(row).setCheckState(panel.types.item(row).checkState().Unchecked)
    assert ids["concept"] not in graph.node_model.ids and graph.node_model.rowCount() == 4
    assert "1 hidden by the filters" in graph.counts.text()
    kinds = panel.kinds
    row = next(r for r in range(kinds.count()) if kinds.item(r).text() == "supersedes")
    kinds.item(row).setCheckState(kinds.item(row).checkState().Unchecked)
    assert all(graph.scene.edges[k].kind != "supersedes" for k in graph.edge_model.keys)
    panel.tag.setText("incident")
    assert set(graph.node_model.ids) == {ids["centre"], ids["cause"]}  # the centre stays


def test_strength_and_time_filters(graph, ids):
    scene = graph.scene
    assert node_mask(scene, GraphFilter(min_strength=2.0)).sum() == 2  # centre + the concept
    born = {n.created_at for n in scene.nodes.values()}
    late = GraphFilter(created_from=max(born) + 1)
    assert node_mask(scene, late).sum() == 1  # only the centre, which always stays
    assert node_mask(scene, GraphFilter(accessed_from=0)).sum() == 1  # none was recalled


def test_search_centres_on_a_shown_match_or_opens_on_one(qtbot, graph, ids):
    graph.search.setText("outage")
    graph.find_text()
    assert graph.selected == [ids["cause"]]
    graph.search.setText("rota lives")
    graph.find_text()
    qtbot.waitUntil(lambda: graph.scene.centre == ids["far"], timeout=WAIT_MS)


def test_positions_are_kept_per_brain(qtbot, tmp_path, brain_path, ids):
    main = open_window(qtbot, tmp_path, brain_path)
    first = open_graph(qtbot, main, ids["centre"])
    first.scene.move(ids["old"], 999.0, -999.0)  # as a Shift-drag leaves it
    first.controller.node_moved(ids["old"])
    placed = first.scene.positions()
    main.close()
    again = open_graph(qtbot, open_window(qtbot, tmp_path, brain_path), ids["centre"])
    assert again.scene.positions() == placed
    assert placed[ids["old"]] == (999.0, -999.0)


def test_positions_are_on_disk_after_the_window_closes(qtbot, tmp_path, brain_path, ids):
    main = open_window(qtbot, tmp_path, brain_path)
    graph = open_graph(qtbot, main, ids["centre"])
    placed = graph.scene.positions()
    store = graph.controller.positions
    main.close()  # hands the positions to the store's writer; closing does not wait for it
    assert store.flush(timeout=WAIT_MS / 1000) and store.error is None
    on_disk = json.loads(store.path.read_text(encoding="utf-8"))
    assert {i: tuple(p) for i, p in on_disk.items()} == placed


def test_export_of_the_shown_graph(graph, tmp_path: Path):
    out = tmp_path / "shown.graphml"
    graph.export.export(out, "graphml", whole=False)
    text = out.read_text(encoding="utf-8")
    assert text.count("<node ") == 5 and text.count("<edge ") == 4


def test_whole_export_is_a_job(qtbot, graph, tmp_path: Path):
    out = tmp_path / "whole.gexf"
    job = graph.export.export(out, "gexf", whole=True)
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS):
        pass
    assert out.read_text(encoding="utf-8").count("<node ") == 12  # 10 memories, 2 nodes


def test_screenshot_of_the_graph_view(qapp, tmp_path, brain_path, ids):
    out = tmp_path / "graph.png"
    render(str(brain_path), str(out), select_id=ids["centre"], size=(900, 600), view="graph")
    image = QImage(str(out))
    assert (image.width(), image.height()) == (900, 600)
    with pytest.raises(ValueError, match="view"):
        render(str(brain_path), str(out), view="map")


def test_the_graph_opens_on_what_the_detail_pane_shows(qtbot, graph, ids):
    wait_graph(qtbot, graph)
    assert graph.isVisible()


def test_the_overview_pages_through_the_busiest_nodes(qtbot, graph, ids):
    graph.open_overview(0)
    qtbot.waitUntil(
        lambda: graph.overview is not None and not graph.controller.busy, timeout=WAIT_MS
    )
    assert graph.scene.nodes.keys() == {ids[k] for k in ids}  # every linked node: one page
    assert "Showing 7 of 7 linked nodes" in graph.badge.text()
    assert graph.badge_action.isVisible() and not graph.next_page.isEnabled()
    graph.expand(ids["concept"])  # an overview's node expands as any other
    wait_graph(qtbot, graph)
    graph.controller.open_on(ids["far"])
    qtbot.waitUntil(lambda: graph.scene.centre == ids["far"], timeout=WAIT_MS)
    assert not graph.badge_action.isVisible()
