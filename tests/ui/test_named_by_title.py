"""Wherever the app names another memory — links, neighbours, history, the link picker — it
says its title, or the start of its text when it has none; never a raw id."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.io import ImportOptions, commit, plan
from memgui.core.progress import run_to_end
from memgui.ui.dialogs.trace_picker import TracePicker
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row


def _brain(tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Harbour plan.md").write_text("Moorings move in May. See [[Mooring]].\n", "utf-8")
    (vault / "Tides.md").write_text("High water at six, with the [[Moon]].\n", "utf-8")
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        options = ImportOptions(format="obsidian")
        run_to_end(commit(brain, run_to_end(plan(brain, vault, options=options))))
        ids = {t.title: t.id for t in brain.list_traces()}
        untitled = brain.add("An agent's note without a title, about the harbour").id
        brain.link(ids["Harbour plan"], ids["Tides"], "relates_to")
        brain.link(ids["Harbour plan"], untitled, "caused_by")
        brain.merge([ids["Tides"], brain.add("Tides are strong in spring").id])
        # Another memory's graph node points at the plan's (a neighbour that is a memory).
        brain.add_edge(ids["Tides"], ids["Harbour plan"], "mentions")
    return path, ids, untitled


def test_other_memories_are_named_by_title(qtbot, tmp_path):
    path, ids, untitled = _brain(tmp_path)
    window = open_window(qtbot, tmp_path, path)
    plan_id = ids["Harbour plan"]
    select_row(window, window.model.row_of(plan_id))
    detail = window.detail

    detail.setCurrentWidget(detail.links)
    qtbot.waitUntil(lambda: detail.links.model.rowCount() == 2, timeout=WAIT_MS)
    others = sorted(detail.links.model.index(r, 3).data() for r in range(2))
    assert others == ["An agent's note without a title, about the harbour", "Tides"]

    detail.setCurrentWidget(detail.neighbours)
    qtbot.waitUntil(lambda: detail.neighbours.model.rowCount() >= 2, timeout=WAIT_MS)
    rows = sorted(
        tuple(detail.neighbours.model.index(r, c).data() for c in (1, 2)) for r in range(2)
    )
    # The concept node the wikilink made (no note is named so), and the node that stands
    # for the memory Tides.
    assert rows == [("concept", "Mooring"), ("memory · episodic", "Tides")]

    detail.setCurrentWidget(detail.history)
    qtbot.waitUntil(lambda: detail.history.model.rowCount() >= 2, timeout=WAIT_MS)
    changes = [detail.history.model.index(r, 3).data() for r in range(2)]
    assert changes == [  # newest first
        "linked → “An agent's note without a title, about the harbour” (caused_by)",
        "linked ↔ “Tides” (relates_to)",
    ]

    select_row(window, window.model.row_of(ids["Tides"]))
    detail.setCurrentWidget(detail.history)
    qtbot.waitUntil(
        lambda: any(
            "took in “Tides are strong in spring”" in (detail.history.model.index(r, 3).data())
            for r in range(detail.history.model.rowCount())
        ),
        timeout=WAIT_MS,
    )


def test_the_link_picker_names_memories_by_title(qtbot, tmp_path):
    path, ids, _untitled = _brain(tmp_path)
    with Brain.open(path, actor="test") as brain:
        picker = TracePicker(brain, ids["Tides"])
        qtbot.addWidget(picker)
        picker.field.setText("moorings")
        qtbot.waitUntil(lambda: picker.results.count() == 1, timeout=WAIT_MS)
        shown = picker.results.item(0).text()
        assert shown == "Harbour plan — Moorings move in May. See [[Mooring]]."


def test_the_agent_activity_names_memories_by_title(tmp_path):
    from memgui.ui.activity.activity_text import describe, details_html

    with Brain.open(tmp_path / "brain.sqlite", actor="mcp:planner") as brain:
        titled = brain.add("Moorings move in May.", metadata={"title": "Harbour plan"})
        plain = brain.add("An agent's note without a title")
        brain.link(titled.id, plain.id, "caused_by")
        added, _, link = brain.journal_since(0)
        assert describe(added) == "added “Harbour plan”"
        labels = {titled.id: titled.label, plain.id: plain.label}
        assert "“Harbour plan” —caused_by→ “An agent's note without a title”" in describe(
            link, labels
        )
        assert "“Harbour plan”" in details_html(link, "", brain)
