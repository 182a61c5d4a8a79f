"""The window sweeps a shared brain's expired memories as it sweeps a file's: a job every
interval on a connection of its own, journaled under `sweep`, the table following; a memory
whose time has not come stays, and closing the brain stops the sweeps."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.errors import NotFound
from memgui.core.shared_brain import SharedBrain
from memgui.ui.semantic.backfill import INTERVAL_KEY
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.slow  # a real server


def test_the_window_sweeps_a_shared_brains_expired_memories(
    qtbot, tmp_path: Path, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="agent") as agent:
        brief = agent.add("a note that lives one second", ttl_secs=1).id
        kept = agent.add("a note that stays").id
    window = open_shared_window(qtbot, tmp_path, pg_address, **{INTERVAL_KEY: "0.1"})
    sweep = window.semantic.shared_sweep
    try:
        assert sweep.session is window.session
        qtbot.waitUntil(lambda: window.model.rowCount() == 1, timeout=WAIT_MS)
        assert window.model.id_at(0) == kept
        with SharedBrain.open(pg_address, actor="check") as check:
            with pytest.raises(NotFound):
                check.get(brief)
            assert check.history(brief)[-1].actor == "sweep"
        window.close_session()
        assert sweep.session is None and not sweep._timer.isActive()
    finally:
        window.close()
