"""The window says "the brain changed on disk" for another program's change only: never for
its own save, merge, undo or restore, the checkpoint that follows them, or a new brain."""

from __future__ import annotations

import os

import apsw

from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row

CHANGED = "the brain changed on disk"


def settle(qtbot, window) -> list[str]:
    """Look as the watcher does while the window's own writes are checkpointed (which moves
    the data version without a journal row) and a search indexes them on a connection of
    its own (a commit without one); return what it said."""
    said: list[str] = []
    window.watcher.external_changed.connect(lambda _changes, text: said.append(text))
    window.watcher.poll()
    checkpointer = window.session.brain.db.checkpointer
    qtbot.waitUntil(lambda: checkpointer.at_rest, timeout=WAIT_MS)
    for _ in range(2):  # a suspicion is confirmed at the next look
        window.watcher.poll()
    window.search_bar.set_query("window OR memory")
    qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)
    window.search_bar.set_query("")
    qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)
    for _ in range(2):
        window.watcher.poll()
    return said


def test_own_save_merge_undo_and_restore_are_not_a_change_on_disk(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    try:
        window.watcher.stop()  # the test looks itself, at the moments it chooses
        version = window.session.brain.data_version()
        select_row(window, 0)
        window.detail.editor.content.setPlainText("Edited in the window")
        window.window_actions.save.trigger()
        assert settle(qtbot, window) == []
        assert window.session.brain.data_version() != version  # the checkpoint moved it
        window.window_actions.undo.trigger()
        assert settle(qtbot, window) == []
        window.table.selectAll()
        window.window_actions.merge.trigger()
        assert settle(qtbot, window) == []
        brain = window.session.brain
        survivor = next(t for t in brain.list_traces(limit=10) if t.content == "Merged by hand")
        window.edits.restore_version(brain.history(survivor.id)[0])
        assert brain.get(survivor.id).content != "Merged by hand"
        assert settle(qtbot, window) == []
    finally:
        window.close()


def test_a_new_empty_brain_is_not_a_change_on_disk(qtbot, tmp_path):
    window = open_window(qtbot, tmp_path, tmp_path / "new.sqlite", live=True)
    try:
        window.watcher.stop()
        assert settle(qtbot, window) == []
    finally:
        window.close()


def test_a_read_only_brain_nothing_writes_is_not_a_change_on_disk(qtbot, tmp_path, brain_path):
    os.chmod(brain_path, 0o444)
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    try:
        assert window.read_only
        window.watcher.stop()
        window.search_bar.set_query("memory")
        qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)
        said: list[str] = []
        window.watcher.external_changed.connect(lambda _changes, text: said.append(text))
        window.watcher.poll()
        window.watcher.poll()
        assert said == []
    finally:
        window.close()


def test_another_programs_write_without_a_journal_is_still_said(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    try:
        trace_id = select_row(window, 0)
        said: list[str] = []
        window.watcher.external_changed.connect(lambda _changes, text: said.append(text))
        agentos = apsw.Connection(str(brain_path))  # no journal, as an AgentOS agent writes
        agentos.execute(
            "UPDATE memory_traces SET content = 'rewritten elsewhere' WHERE id = ?", (trace_id,)
        )
        agentos.close()
        qtbot.waitUntil(lambda: CHANGED in said, timeout=WAIT_MS)
        qtbot.waitUntil(
            lambda: window.detail.editor.content.toPlainText() == "rewritten elsewhere",
            timeout=WAIT_MS,
        )
    finally:
        window.close()
