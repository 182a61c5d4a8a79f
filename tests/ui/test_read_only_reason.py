"""What the window says of a brain memgui opens read-only for a reason of its own, or of
one holding triggers memgui did not make."""

from __future__ import annotations

import shutil

import apsw

from memgui.core.brain import Brain
from memgui.ui.window.brain_tips import READ_ONLY_TIP
from tests.support.paths import SHARED
from tests.support.window import open_window

AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


def test_a_newer_agentos_schema_is_shown_read_only_with_its_reason(qtbot, tmp_path):
    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(AGENTOS_BRAIN, path)
    conn = apsw.Connection(str(path))
    conn.execute("UPDATE brain_meta SET value = '3' WHERE key = 'schema_version'")
    conn.close()
    before = path.read_bytes()
    window = open_window(qtbot, tmp_path, path)
    try:
        assert window.read_only and window.read_only_label.isVisible()
        assert not window.window_actions.new_memory.isEnabled()
        tip = window.read_only_label.toolTip()
        assert tip != READ_ONLY_TIP
        assert "AgentOS schema version 3, newer than the 2 this memgui knows" in tip
    finally:
        window.close()
    assert path.read_bytes() == before


def test_a_brain_with_triggers_memgui_did_not_make_says_so(qtbot, tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("seed")
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TRIGGER audit AFTER DELETE ON memory_traces BEGIN SELECT 1; END")
    conn.close()
    window = open_window(qtbot, tmp_path, path)
    try:
        assert window.triggers_label.isVisible() and not window.read_only
        assert "triggers memgui did not make (audit on memory_traces)" in (
            window.triggers_label.toolTip()
        )
    finally:
        window.close()


def test_a_brain_without_them_shows_no_such_mark(qtbot, tmp_path):
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("seed")
    window = open_window(qtbot, tmp_path, path)
    try:
        assert not window.triggers_label.isVisible()
    finally:
        window.close()
