"""Live refresh and the search bar: Ctrl+Y redoes, a search drops a
hit another process edited away, a write ending at a page's edge is announced as what it
was, and a capped search says so."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import Qt

from memgui.core.brain import Brain
from memgui.core.model import MAX_LIMIT
from memgui.ui.commands import NewTraceCommand, push
from memgui.ui.window.live_refresh import PAGE
from tests.support.paths import ROOT
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, wait_idle


def run_elsewhere(script: str, *args: str) -> None:
    subprocess.run([sys.executable, "-c", script, *args], cwd=ROOT, check=True, timeout=60)


def test_ctrl_y_redoes(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    keys = [k.toString() for k in window.window_actions.redo.shortcuts()]
    assert len(keys) == len(set(keys)) and "Ctrl+Y" in keys
    stack = window.session.undo_stack
    push(window.session, NewTraceCommand(window.session, {"content": "to redo"}))
    stack.undo()
    window.table.setFocus()
    qtbot.keyClick(window.table, Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier)
    assert stack.index() == stack.count()  # redone


@pytest.mark.slow
def test_a_hit_edited_away_by_another_process_leaves_the_search(qtbot, tmp_path, brain_path):
    with Brain.open(brain_path, actor="test") as brain:
        target = brain.add("Send the zqinvoice to Alice").id
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    window.model.set_search("zqinvoice")
    qtbot.waitUntil(lambda: not window.model.busy and window.model.rowCount() == 1, timeout=WAIT_MS)
    run_elsewhere(
        "import sys\nfrom memgui.core.brain import Brain\n"
        "with Brain.open(sys.argv[1], actor='cli') as b:\n"
        "    b.update(sys.argv[2], {'content': 'Call Bob about the weather'})\n",
        str(brain_path),
        target,
    )
    qtbot.waitUntil(lambda: window.model.rowCount() == 0, timeout=WAIT_MS)
    window.close()


@pytest.mark.slow
def test_a_write_ending_at_a_page_edge_is_announced_as_what_it_was(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    messages: list[str] = []
    window.statusBar().messageChanged.connect(lambda m: messages.append(m) if m else None)
    run_elsewhere(
        "import sys\nfrom memgui.core.brain import Brain\n"
        "with Brain.open(sys.argv[1], actor='cli') as b, b.batch():\n"
        f"    [b.add(f'note {{i}}') for i in range({PAGE})]\n",
        str(brain_path),
    )
    qtbot.waitUntil(lambda: any("cli added" in m for m in messages), timeout=WAIT_MS)
    # The page read was full, so the watcher reads the next one (empty) soon after.
    qtbot.waitUntil(lambda: not window.watcher.paging, timeout=WAIT_MS)
    assert not any("changed on disk" in m for m in messages), messages
    window.close()


def test_a_capped_search_says_more_may_match(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    with window.session.brain.batch():
        for i in range(MAX_LIMIT + 20):
            window.session.brain.add(f"zqfiller note {i}")
    window.model.set_search("zqfiller")
    qtbot.waitUntil(lambda: not window.model.busy and window.model.rowCount() > 0, timeout=WAIT_MS)
    wait_idle(qtbot, window)
    assert window.search_bar.status_label.text().startswith(f"best {MAX_LIMIT} results")
