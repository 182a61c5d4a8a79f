"""The window on a shared brain (a real PostgreSQL): opened by File ▸ Open shared brain…'s
job, its table, editor with undo, keyword search, history and links work; what needs more
is disabled with a tooltip saying why; another program's write shows in the table, the
window waiting for the row, not for a time."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction

from memgui.core.shared_brain import SharedBrain
from memgui.ui.window.shared_limits import WHY
from tests.support.brains import fill
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS
from tests.support.window import select_row, wait_idle

pytestmark = pytest.mark.slow  # a real server


@pytest.fixture
def filled(pg_address: str) -> str:
    with SharedBrain.open(pg_address, actor="test") as brain:
        fill(brain)  # type: ignore[arg-type]
    return pg_address


def test_browse_edit_undo_search_history_and_links(qtbot, tmp_path: Path, filled: str) -> None:
    window = open_shared_window(qtbot, tmp_path, filled)
    try:
        with SharedBrain.open(filled, actor="check") as check:
            total = check.count()
            assert window.model.rowCount() == total > 2
            assert "team" in window.windowTitle() and "postgresql://" in window.windowTitle()
            trace_id = select_row(window, 0)
            before = check.get(trace_id)
            editor = window.detail.editor
            editor.content.setPlainText("Rewritten on the server")
            window.window_actions.save.trigger()
            assert check.get(trace_id).content == "Rewritten on the server"
            qtbot.waitUntil(
                lambda: (
                    window.model.index(window.model.row_of(trace_id), 0).data()
                    == "Rewritten on the server"
                ),
                timeout=WAIT_MS,
            )
            window.window_actions.undo.trigger()
            assert check.get(trace_id).content == before.content
            window.window_actions.redo.trigger()
            assert check.get(trace_id).content == "Rewritten on the server"
            window.window_actions.undo.trigger()  # twice: the tolerant undo, not a conflict
            window.window_actions.redo.trigger()
            assert check.get(trace_id).content == "Rewritten on the server"
            assert "Could not" not in window.statusBar().currentMessage()
            # The history tab reads the journal on the server.
            window.detail.setCurrentWidget(window.detail.history)
            qtbot.waitUntil(lambda: window.detail.history.model.rowCount() >= 4, timeout=WAIT_MS)
            # Links: one made elsewhere shows in the Links tab, removed here and undone.
            other = window.model.id_at(1)
            check.link(trace_id, other, "relates_to")
            tab = window.detail.links
            window.detail.setCurrentWidget(tab)
            select_row(window, window.model.row_of(other))
            select_row(window, window.model.row_of(trace_id))
            qtbot.waitUntil(lambda: tab.model.rowCount() == 1, timeout=WAIT_MS)
            tab.view.selectRow(0)
            tab.remove_button.click()
            assert check.related(trace_id) == []
            window.window_actions.undo.trigger()
            assert [r.id for r in check.related(trace_id)] == [other]
            # Merge two memories, then undo it.
            count = check.count()
            third = next(t for t in (window.model.id_at(r) for r in range(3)) if t != trace_id)
            pair = [third, other] if third != other else [third, window.model.id_at(3)]
            selection = window.table.selectionModel()
            selection.clearSelection()
            for picked in pair:
                selection.select(
                    window.model.index(window.model.row_of(picked), 0),
                    selection.SelectionFlag.Select | selection.SelectionFlag.Rows,
                )
            window.window_actions.merge.trigger()
            assert check.count() == count - 1
            window.window_actions.undo.trigger()
            assert check.count() == count
            # Keyword search, on the server's full-text column.
            window.search_bar.set_query("server")
            qtbot.waitUntil(
                lambda: not window.model.busy and window.model.rowCount() == 1, timeout=WAIT_MS
            )
            assert window.model.id_at(0) == trace_id
    finally:
        window.close()


def test_what_a_shared_brain_does_not_offer_is_disabled_saying_why(
    qtbot, tmp_path: Path, filled: str, brain_path: Path
) -> None:
    window = open_shared_window(qtbot, tmp_path, filled)
    try:
        select_row(window, 0)
        select_row(window, 1)
        window.table.selectAll()
        window.update_actions()
        assert window.window_actions.merge.isEnabled()  # merging works on a shared brain
        consolidate = window.findChild(QAction, "consolidate")
        assert consolidate.isEnabled() and window.graph.action.isEnabled()  # both work there
        assert window.import_export.export.isEnabled()  # import and export work there
        assert window.window_actions.import_file.isEnabled()
        pane = window.detail
        assert not pane.isTabEnabled(pane.indexOf(pane.similar))
        assert pane.tabToolTip(pane.indexOf(pane.similar)) == WHY["similar"]
        assert pane.isTabEnabled(pane.indexOf(pane.neighbours))  # the graph's reads work
        box = window.search_bar.mode_box
        assert box.model().item(box.findData("semantic")).isEnabled()  # search by meaning
        assert box.model().item(box.findData("hybrid")).isEnabled()
        cognitive = box.model().item(box.findData("cognitive"))
        assert not cognitive.isEnabled() and cognitive.toolTip() == WHY["cognitive"]
        assert window.window_actions.delete.isEnabled()  # editing is on
        # A brain file opened next has them all back.
        assert window.files.open_path(brain_path)
        wait_idle(qtbot, window)
        assert window.graph.action.isEnabled()
        assert pane.isTabEnabled(pane.indexOf(pane.similar))
        assert box.model().item(box.findData("cognitive")).isEnabled()
    finally:
        window.close()


def test_another_programs_write_shows_in_the_table(qtbot, tmp_path: Path, filled: str) -> None:
    window = open_shared_window(qtbot, tmp_path, filled, live=True)
    try:
        qtbot.waitUntil(
            lambda: window.shared_live is not None and window.shared_live.listener is not None,
            timeout=WAIT_MS,
        )
        rows = window.model.rowCount()
        with SharedBrain.open(filled, actor="agentos") as other:
            added = other.add("written by another machine's agent")
            qtbot.waitUntil(lambda: window.model.row_of(added.id) >= 0, timeout=WAIT_MS)
            assert window.model.rowCount() == rows + 1
            other.update(added.id, {"content": "and edited there"})
            qtbot.waitUntil(
                lambda: (
                    window.model.index(window.model.row_of(added.id), 0).data()
                    == "and edited there"
                ),
                timeout=WAIT_MS,
            )
    finally:
        window.close()


def test_the_command_line_address_and_the_recent_menu_open_it(
    qtbot, tmp_path: Path, filled: str
) -> None:
    from memgui.ui.app import create_window
    from memgui.ui.dialogs.shared_brain_dialog import without_password

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(filled, None, settings=settings, live=False)  # `memgui ADDRESS`
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.session is not None, timeout=WAIT_MS)
        assert window.session.shared and window.session.brain_id == "team"
        window.files.open_sample()
        assert not window.session.shared
        menu = window.window_actions.recent_menu
        menu.aboutToShow.emit()
        entry = next(a for a in menu.actions() if "postgresql://" in a.text())
        assert entry.text().replace("&&", "&") == without_password(filled)
        with qtbot.waitSignal(window.shared_brains.connected, timeout=WAIT_MS):
            entry.trigger()
        assert window.session.shared
    finally:
        window.close()


def test_an_empty_shared_brain_welcomes_and_its_import_buttons_import(
    qtbot, tmp_path: Path, pg_address: str, monkeypatch
) -> None:
    from memgui.ui.importing import import_dialog

    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        assert window.pages.currentWidget() is window.welcome
        asked: list[bool] = []
        monkeypatch.setattr(
            import_dialog, "choose_source", lambda _parent, folder: asked.append(folder)
        )
        window.welcome.import_requested.emit()  # the file chooser opens, as on a file
        assert asked == [False]
    finally:
        window.close()


def test_a_dropped_live_refresh_listens_again(qtbot, tmp_path: Path, filled: str) -> None:
    """The server drops the listening connection (as a restart does): the window listens
    again, reads what it shows again, and hears the next change of another program."""
    window = open_shared_window(qtbot, tmp_path, filled, live=True)
    try:
        qtbot.waitUntil(
            lambda: window.shared_live is not None and window.shared_live.listener is not None,
            timeout=WAIT_MS,
        )
        live = window.shared_live
        assert live is not None and live.listener is not None
        listener = live.listener
        window.session.brain.conn.execute(  # type: ignore[attr-defined]
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE query LIKE 'LISTEN %%' AND pid != pg_backend_pid()"
        )
        qtbot.waitUntil(lambda: listener.reconnected == 1, timeout=WAIT_MS)
        with SharedBrain.open(filled, actor="agentos") as agent:
            agent.add("written after the window listens again")
        qtbot.waitUntil(
            lambda: (
                window.statusBar().currentMessage()
                == "another program changed 1 memories of the shared brain"
            ),
            timeout=WAIT_MS,
        )
        assert listener.error is None
    finally:
        window.close()


def test_agent_activity_on_a_shared_brain_is_counted_listed_and_reviewed(
    qtbot, tmp_path: Path, pg_address: str
) -> None:
    """Another machine's agent writes; the badge counts it as it happens, the panel lists it
    under the agent's name, and marking it reviewed is kept on the server."""
    window = open_shared_window(qtbot, tmp_path, pg_address, live=True)
    try:
        qtbot.waitUntil(
            lambda: window.shared_live is not None and window.shared_live.listener is not None,
            timeout=WAIT_MS,
        )
        assert window.activity.badge.isEnabled() and window.activity.count == 0
        with SharedBrain.open(pg_address, actor="agentos") as agent:
            agent.add("remembered by an agent on another machine")
            agent.add("and a second memory")
        qtbot.waitUntil(lambda: window.activity.count == 2, timeout=WAIT_MS)
        window.activity.toggle_action.trigger()
        model = window.activity.model
        assert model is not None
        qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=WAIT_MS)
        assert model.index(0, 1).data() == "agentos"
        window.activity.mark_all_reviewed()
        qtbot.waitUntil(lambda: window.activity.count == 0, timeout=WAIT_MS)
        with SharedBrain.open(pg_address, actor="check") as check:
            assert check.unreviewed_count() == 0
    finally:
        window.close()
