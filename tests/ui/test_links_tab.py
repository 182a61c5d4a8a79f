"""The Links tab: removing a link seen from either end, and its empty state."""

from __future__ import annotations

import pytest

from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row


@pytest.fixture
def window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path)
    yield opened
    opened.close()


def _links_of(window, trace_id):
    tab = window.detail.links
    window.detail.setCurrentWidget(tab)
    select_row(window, window.model.row_of(trace_id))
    return tab


@pytest.mark.parametrize("kind", ["supersedes", "caused_by", "relates_to"])
@pytest.mark.parametrize("seen_from", ["source", "target"])
def test_a_link_is_removed_from_either_end_and_undone(qtbot, window, kind, seen_from):
    brain = window.session.brain
    source, target = window.model.id_at(0), window.model.id_at(1)
    brain.link(source, target, kind)
    shown = source if seen_from == "source" else target
    tab = _links_of(window, shown)
    qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=WAIT_MS)
    tab.view.selectRow(0)
    assert tab.remove_button.isEnabled()
    tab.remove_button.click()
    assert brain.related(shown) == []
    assert "invalid" not in window.statusBar().currentMessage()
    window.window_actions.undo.trigger()
    assert [(r.id, r.stored_kind) for r in brain.related(source)] == [(target, kind)]


def test_without_links_the_tab_says_so_and_its_buttons_wait_for_a_choice(qtbot, window):
    brain = window.session.brain
    a, b = window.model.id_at(0), window.model.id_at(1)
    tab = _links_of(window, a)
    assert tab.model.rowCount() == 0
    assert not tab.message.isHidden() and "no links" in tab.message.text()
    assert not tab.remove_button.isEnabled() and not tab.open_button.isEnabled()
    brain.link(a, b, "relates_to")
    tab.show_trace(brain, brain.get(a))
    assert tab.message.isHidden() and tab.model.rowCount() == 1
    assert not tab.remove_button.isEnabled()  # nothing chosen yet
    tab.view.selectRow(0)
    assert tab.remove_button.isEnabled() and tab.open_button.isEnabled()


def test_the_neighbours_tab_says_when_it_shows_only_the_nearest(qtbot, window, monkeypatch):
    import memgui.ui.views.detail_tabs as detail_tabs

    monkeypatch.setattr(detail_tabs, "MAX_NEIGHBOURS", 3)
    brain = window.session.brain
    trace_id = window.model.id_at(0)
    memory = brain.add_node("memory", "memory", {"trace_id": trace_id}).id
    tab = window.detail.neighbours
    for count in (3, 4):
        brain.add_edge(memory, brain.add_node(f"topic {count}", "topic").id, "mentions")
        if count == 3:
            for i in range(2):
                brain.add_edge(memory, brain.add_node(f"topic {i}", "topic").id, "mentions")
        tab.show_trace(brain, brain.get(trace_id))
        assert tab.model.rowCount() == 3
        assert tab.message.isHidden() == (count == 3)
    assert "3 nearest" in tab.message.text()


@pytest.mark.parametrize(
    ("kind", "from_source", "from_target"),
    [
        ("relates_to", "↔ both ways", "↔ both ways"),
        ("supersedes", "→ to", "← from"),
    ],
)
def test_a_links_direction_reads_as_its_kind(qtbot, window, kind, from_source, from_target):
    # relates_to is symmetric (stored smaller id first): seen from either end it goes both ways.
    brain = window.session.brain
    source, target = window.model.id_at(0), window.model.id_at(1)
    brain.link(source, target, kind)
    for shown, expected in ((source, from_source), (target, from_target)):
        tab = _links_of(window, shown)
        qtbot.waitUntil(lambda tab=tab: tab.model.rowCount() == 1, timeout=WAIT_MS)
        assert tab.model.index(0, 1).data() == expected
