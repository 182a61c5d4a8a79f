"""A brain memgui opens read-only for a reason of its own says why in the window."""

from __future__ import annotations

import shutil
from pathlib import Path

import apsw

from memgui.ui.main_window import READ_ONLY_TIP
from tests.ui.test_main_window import open_window

AGENTOS_BRAIN = (
    Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "agentos" / "brain.sqlite"
)


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
        assert not window.actions.new_memory.isEnabled()
        tip = window.read_only_label.toolTip()
        assert tip != READ_ONLY_TIP
        assert "AgentOS schema version 3, newer than the 2 this memgui knows" in tip
    finally:
        window.close()
    assert path.read_bytes() == before
