"""The graph window's "+N more", hubs, hidden hubs and what a node's look says (its
colour, size, opacity, marks and the legend)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.ui.graph import encodings
from memgui.ui.graph.graph_filters import node_mask
from tests.support.graph import open_graph, wait_graph
from tests.support.window import open_window

LEAVES = 120  # the centre's own neighbours: more than one expand brings (100)
HUB_LEAVES = 205  # the hub's: above the default hub threshold (200)


@pytest.fixture
def crowd(brain_path):
    """A centre linked to a hub and to LEAVES memories; the hub linked to HUB_LEAVES more;
    one of the centre's neighbours recalled often, one decayed to almost nothing."""
    with Brain.open(brain_path, actor="test") as brain, brain.batch():
        centre = brain.add("the centre", scope="thread").id
        hub = brain.add("the hub").id
        brain.link(centre, hub, "relates_to")
        leaves = [brain.add(f"leaf {i}").id for i in range(LEAVES)]
        for leaf in leaves:
            brain.link(centre, leaf, "caused_by")
        for i in range(HUB_LEAVES):
            brain.link(hub, brain.add(f"behind the hub {i}").id, "relates_to")
        faint = brain.add("almost forgotten", strength=0.01).id
        brain.link(centre, faint, "relates_to")
        recalled = leaves[0]
        brain.link(recalled, faint, "relates_to")  # both rank above the other leaves
        for _ in range(7):
            brain.note_recalls([brain.get(recalled)])
    return {"centre": centre, "hub": hub, "recalled": recalled, "faint": faint}


@pytest.fixture
def graph(qtbot, tmp_path, brain_path, crowd):
    return open_graph(qtbot, open_window(qtbot, tmp_path, brain_path), crowd["centre"])


def test_an_expand_brings_100_and_the_rest_waits_behind_more(qtbot, graph, crowd):
    scene = graph.scene
    shown = LEAVES + 2  # the leaves, the hub and the faint one
    assert len(scene.nodes) == 101  # the centre and the 100 busiest first
    assert crowd["hub"] in scene.nodes  # the busiest of all
    assert scene.hidden(crowd["centre"]) == shown - 100
    assert graph.canvas.more == {crowd["centre"]: shown - 100}
    graph.select([crowd["centre"]])
    graph.canvas.setFocus()
    qtbot.keyClick(graph.canvas, Qt.Key.Key_Plus)  # the keyboard's "+N more"
    qtbot.waitUntil(lambda: len(scene.nodes) == shown + 1, timeout=60_000)
    wait_graph(qtbot, graph)
    assert scene.hidden(crowd["centre"]) == 0 and not graph.canvas.more


def test_a_hub_is_a_badge_not_walked_and_hide_top_hubs_takes_it_away(graph, crowd):
    scene = graph.scene
    a = scene.arrays
    hub_row = a.index[crowd["hub"]]
    assert a.degree[hub_row] == HUB_LEAVES + 1 > graph.controller.hub_degree
    assert crowd["hub"] not in scene.expanded  # its 205 neighbours were not brought in
    assert not any(n.label.startswith("behind the hub") for n in scene.nodes.values())
    graph.panel.hide_hubs.setValue(1)
    assert crowd["hub"] not in graph.node_model.ids
    assert crowd["centre"] in graph.node_model.ids  # a hub it is, but the view stays on it
    assert not node_mask(scene, graph.canvas.filter)[hub_row]
    graph.panel.hide_hubs.setValue(0)
    assert crowd["hub"] in graph.node_model.ids


def test_size_opacity_and_marks_follow_the_memory(graph, crowd):
    a = graph.scene.arrays
    recalled, faint, hub = (a.index[crowd[k]] for k in ("recalled", "faint", "hub"))
    assert a.radius[recalled] == encodings.radius_of(7) > a.radius[hub] == encodings.MIN_RADIUS
    assert a.below_prune[faint] and not a.below_prune[hub]  # dashed: consolidation prunes it
    assert a.alpha[faint] == 0 < a.alpha[hub] == encodings.ALPHA_STEPS - 1  # faint, opaque


def test_the_legend_follows_the_colour_mode(graph):
    def texts() -> list[str]:
        return [e.text for e in graph.legend.entries]

    assert texts() == ["episodic"]
    graph.colour_by.setCurrentIndex(encodings.COLOUR_BY.index("scope"))
    assert texts() == ["thread", "user"]  # known values in their fixed order (SCOPES)
    slots = graph.scene.arrays.slots["scope"]
    centre = graph.scene.arrays.index[graph.scene.centre]
    assert slots[centre] == encodings.slot_of("thread", "scope")
