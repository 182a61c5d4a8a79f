"""The Agent activity view: its tree model under Qt's model tester, the badge that counts
unreviewed changes live, marks that survive reopening, reverts with undo, conflicts shown."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memgui.core.brain import Brain
from memgui.core.model import changes_of
from memgui.ui.activity import activity_model
from memgui.ui.activity.activity_model import NOW, WHAT, ActivityModel, ActivityRole
from memgui.ui.session import BrainSession
from tests.support.paths import ROOT
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window


@pytest.fixture
def brain_path(tmp_path):
    """A brain a person started in the window, which agents then wrote to."""
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        mine = brain.add("Written by the person")
        stored = brain.add("Stored by an agent", tags=["a"], actor="mcp:claude-code")
        brain.update(mine.id, {"content": "Edited by an agent"}, actor="mcp:claude-code")
        with brain.batch(actor="rest"):
            one = brain.add("First of a batch")
            two = brain.add("Second of a batch")
            brain.link(one.id, two.id, "relates_to")
        brain.forget(stored.id, actor="cli")
    return path


@pytest.fixture
def window(qtbot, tmp_path, brain_path):
    opened = open_window(qtbot, tmp_path, brain_path)
    qtbot.waitUntil(lambda: opened.activity.count == 6, timeout=WAIT_MS)
    opened.activity.toggle_action.trigger()  # the panel on screen
    yield opened
    opened.close()


def rows(model: ActivityModel, parent=None) -> list[str]:
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    return [model.index(r, WHAT, parent).data() for r in range(model.rowCount(parent))]


def core_state(brain: Brain) -> list[tuple]:
    traces = brain.db.conn.execute(
        "SELECT id, content, tags, deleted, type, scope, category FROM memory_traces ORDER BY id"
    ).fetchall()
    links = brain.db.conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()
    return [*traces, *sorted(links)]


def test_the_tree_groups_by_actor_then_batch_newest_first(window) -> None:
    model = window.activity.model
    top = [(model.index(r, 1).data(), model.index(r, WHAT).data()) for r in range(3)]
    assert top == [
        ("cli", "1 change in 1 batch"),
        ("rest", "3 changes in 1 batch"),
        ("mcp:claude-code", "2 changes in 2 batches"),
    ]
    agent = model.index(2, 0)
    assert rows(model, agent) == [
        "edited content of “Edited by an agent”",
        "added “Stored by an agent”",
    ]
    assert model.index(1, NOW, agent).data() == "changed since"  # cli forgot it since
    batch = model.index(0, 0, model.index(1, 0))
    assert model.hasChildren(batch)
    if model.canFetchMore(batch):
        model.fetchMore(batch)
    added_1, added_2, linked = rows(model, batch)
    assert (added_1, added_2) == ("added “First of a batch”", "added “Second of a batch”")
    # relates_to is symmetric, stored smaller id first: the two ends in either order.
    assert linked in (
        "linked “First of a batch” —relates_to→ “Second of a batch”",
        "linked “Second of a batch” —relates_to→ “First of a batch”",
    )
    assert window.activity.badge.text() == "Agent activity: 6"
    view = [a.menu() for a in window.menuBar().actions() if a.text() == "&View"][0]
    assert window.activity.toggle_action in view.actions()


def test_the_model_passes_the_model_tester_while_it_pages_and_changes(
    qtbot, brain_path, qtmodeltester, monkeypatch
) -> None:
    monkeypatch.setattr(activity_model, "BATCH_PAGE", 2)
    monkeypatch.setattr(activity_model, "CHANGE_PAGE", 2)
    session = BrainSession.open(brain_path)
    try:
        model = ActivityModel(session.brain)
        qtmodeltester.check(model)
        while model.canFetchMore(activity_model.QModelIndex()):
            model.fetchMore(activity_model.QModelIndex())
        assert model.batch_count() == 4
        with Brain.open(brain_path, actor="rest") as agent:
            agent.add("Arrived later")
        model.refresh()  # inserted at the top, under the tester's eye
        assert model.index(0, 1).data() == "rest"
        session.brain.mark_reviewed([model.shown_batches()[-1].batch_id])
        model.refresh()  # the oldest batch leaves in place
        assert model.batch_count() == 4
        qtmodeltester.check(model)
    finally:
        session.close()


def test_a_cli_process_and_a_rest_server_raise_the_badge_live(qtbot, tmp_path, brain_path):
    from tests.support.servers import rest_server, server_env

    window = open_window(qtbot, tmp_path, brain_path, live=True)
    try:
        qtbot.waitUntil(lambda: window.activity.count == 6, timeout=WAIT_MS)
        env = server_env(tmp_path)
        subprocess.run(
            [sys.executable, "-m", "memgui", "--brain", str(brain_path), "add", "From the CLI"],
            cwd=ROOT, env=env, check=True, timeout=120, capture_output=True,
        )  # fmt: skip
        qtbot.waitUntil(lambda: window.activity.count == 7, timeout=WAIT_MS)
        model = window.activity.model
        assert model.index(0, 1).data() == "cli"  # the hidden panel's list is not followed…
        assert model.index(0, WHAT).data() == "1 change in 1 batch"  # …(the older cli batch)
        window.activity.toggle_action.trigger()  # …until the panel opens: read anew, then live
        qtbot.waitUntil(
            lambda: model.index(0, WHAT).data() == "2 changes in 2 batches", timeout=WAIT_MS
        )
        import httpx

        args = ("--brain", str(brain_path), "serve-rest", "--addr", "127.0.0.1:0")
        with rest_server(env, *args) as rest:
            reply = httpx.post(
                f"{rest.url}/api/memories",
                json={"content": "Stored over REST", "type": "DECISION"},
                timeout=60,
            )
            assert reply.status_code == 201, reply.text
            qtbot.waitUntil(lambda: window.activity.count == 8, timeout=WAIT_MS)
            qtbot.waitUntil(lambda: model.index(0, 1).data() == "rest", timeout=WAIT_MS)
            assert model.index(0, WHAT).data() == "1 change in 1 batch"
            table = window.model
            assert "Stored over REST" in [table.index(r, 0).data() for r in range(table.rowCount())]
    finally:
        window.close()


def test_mark_reviewed_survives_reopening_and_undo_takes_it_back(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    service = window.activity
    qtbot.waitUntil(lambda: service.count == 6, timeout=WAIT_MS)
    service.toggle_action.trigger()
    panel = service.panel
    panel.select(service.model.index(1, 0))  # the rest batch's group
    panel.mark_action.trigger()
    qtbot.waitUntil(lambda: service.count == 3, timeout=WAIT_MS)
    assert [service.model.index(r, 1).data() for r in range(2)] == ["cli", "mcp:claude-code"]
    window.window_actions.undo.trigger()
    # The count's job and the list's refresh (after its short timer) land in either order.
    qtbot.waitUntil(lambda: service.count == 6 and service.model.rowCount() == 3, timeout=WAIT_MS)
    window.window_actions.redo.trigger()
    qtbot.waitUntil(lambda: service.count == 3, timeout=WAIT_MS)
    window.close()
    again = open_window(qtbot, tmp_path, brain_path)
    try:
        qtbot.waitUntil(lambda: again.activity.count == 3, timeout=WAIT_MS)
        again.activity.toggle_action.trigger()
        assert again.activity.model.rowCount() == 2
        again.activity.panel.mark_all_action.trigger()
        qtbot.waitUntil(
            lambda: again.activity.count == 0 and again.activity.model.rowCount() == 0,
            timeout=WAIT_MS,
        )
        assert again.activity.badge.text() == "Agent activity"
    finally:
        again.close()
    with Brain.open(brain_path, actor="gui") as brain:
        assert brain.unreviewed_count() == 0


def test_revert_one_change_and_a_batch_then_undo_to_the_exact_state(window, qtbot) -> None:
    service, brain = window.activity, window.session.brain
    before = core_state(brain)
    agent = service.model.index(2, 0)
    edit = service.model.index(0, 0, agent)
    service.panel.select(edit)
    service.panel.revert_change_action.trigger()
    edited = service.model.entry_of(edit)
    assert brain.get(edited.trace_id).content == "Written by the person"
    qtbot.waitUntil(lambda: service.model.index(0, NOW, agent).data() == "undone", timeout=WAIT_MS)
    window.window_actions.undo.trigger()
    assert core_state(brain) == before
    window.window_actions.redo.trigger()
    assert brain.get(edited.trace_id).content == "Written by the person"
    window.window_actions.undo.trigger()
    assert core_state(brain) == before
    rest = service.model.index(0, 0, service.model.index(1, 0))
    service.panel.select(rest)
    service.panel.revert_batch_action.trigger()
    assert [t.content for t in brain.list_traces()] == ["Edited by an agent"]
    window.window_actions.undo.trigger()
    assert core_state(brain) == before


def test_a_revert_that_meets_a_later_change_is_shown_and_writes_nothing(window, qtbot) -> None:
    service, brain = window.activity, window.session.brain
    model = service.model
    agent = model.index(2, 0)
    edited = model.index(0, 0, agent)  # "edited content of “Edited by an agent”"
    assert model.index(0, NOW, agent).data() == "as written"
    with Brain.open(window.session.path, actor="mcp:other") as other:
        other.update(model.entry_of(edited).trace_id, {"content": "Rewritten by another agent"})
    before = core_state(brain)
    last = brain.last_journal_id()
    service.panel.select(edited)
    service.panel.revert_change_action.trigger()
    problem = service.panel.problem
    assert problem.isVisible() and "conflict" in problem.text()
    assert "Nothing was overwritten" in problem.text()
    assert core_state(brain) == before and brain.last_journal_id() == last
    assert window.session.undo_stack.count() == 0
    assert model.index(0, NOW, agent).data() == "changed since"  # and the row says why


def test_edit_opens_the_memory_and_forget_trashes_it_with_undo(window, qtbot) -> None:
    service, brain = window.activity, window.session.brain
    edit = service.model.index(0, 0, service.model.index(2, 0))
    trace_id = service.model.entry_of(edit).trace_id
    service.panel.select(edit)
    service.panel.edit_action.trigger()
    assert window.detail.trace is not None and window.detail.trace.id == trace_id
    service.panel.forget_action.trigger()
    assert brain.get(trace_id).deleted
    window.window_actions.undo.trigger()
    assert not brain.get(trace_id).deleted


def test_the_window_s_own_import_is_never_listed_even_after_reopening(
    qtbot, tmp_path, brain_path
) -> None:
    window = open_window(qtbot, tmp_path, brain_path)
    service = window.activity
    qtbot.waitUntil(lambda: service.count == 6, timeout=WAIT_MS)
    service.toggle_action.trigger()
    session = window.session
    # As the import job does: written under import:<format>, announced as this window's.
    with qtbot.waitSignal(session.bus.changed, timeout=WAIT_MS):
        added = session.brain.add("Imported here", actor="import:jsonl")
        session.publish(changes_of(added), session)
    qtbot.waitUntil(lambda: session.brain.review_mark().batches != {}, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: not service._refresh.isActive(), timeout=WAIT_MS)
    assert service.count == 6 and "import:jsonl" not in rows(service.model)
    window.close()
    with Brain.open(brain_path, actor="gui") as brain:
        assert brain.unreviewed_count() == 6
        assert all(b.actor != "import:jsonl" for b in brain.unreviewed_batches().batches)


def test_a_read_only_brain_lists_but_offers_no_change(qtbot, tmp_path, brain_path) -> None:
    brain_path.chmod(0o444)
    try:
        window = open_window(qtbot, tmp_path, brain_path)
        qtbot.waitUntil(lambda: window.activity.count == 6, timeout=WAIT_MS)
        panel = window.activity.panel
        panel.select(window.activity.model.index(0, 0, window.activity.model.index(0, 0)))
        assert panel.edit_action.isEnabled()
        for action in (panel.mark_action, panel.forget_action, panel.revert_change_action):
            assert not action.isEnabled()
        window.close()
    finally:
        brain_path.chmod(0o644)


def test_the_detail_box_shows_before_and_after(window) -> None:
    service = window.activity
    edit = service.model.index(0, 0, service.model.index(2, 0))
    service.panel.select(edit)
    shown = service.panel.details.toPlainText()
    assert "Written by the person" in shown and "Edited by an agent" in shown
    assert "mcp:claude-code" in shown
    assert edit.data(ActivityRole.KIND) == "batch" and edit.data(ActivityRole.STATE)


def test_the_screenshot_opens_the_panel_on_its_first_change(qtbot, tmp_path, brain_path) -> None:
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    from memgui.ui.screenshot import render, show_activity

    window = open_window(qtbot, tmp_path, brain_path)
    try:
        show_activity(QApplication.instance(), window)
        panel = window.activity.panel
        assert window.activity.dock.isVisible()
        assert panel.current().data(ActivityRole.KIND) in ("batch", "change")
        assert "edited content of “Edited by an agent”" in panel.details.toPlainText()
    finally:
        window.close()
    out = tmp_path / "activity.png"
    render(str(brain_path), str(out), size=(1000, 700), activity=True)
    assert QImage(str(out)).size().toTuple() == (1000, 700)
