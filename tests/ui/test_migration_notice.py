"""An AgentOS brain is migrated only after the window said so: what changes, and where the
backup goes, once per brain; keeping it as it is writes nothing."""

from __future__ import annotations

import shutil

from memgui.core.brain import Brain
from memgui.core.storage import schema
from tests.support.paths import SHARED
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle

AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


def agentos_copy(tmp_path):
    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(AGENTOS_BRAIN, path)
    path.chmod(0o644)
    return path


def test_the_first_save_says_what_migrating_changes_and_where_the_backup_goes(qtbot, tmp_path):
    path = agentos_copy(tmp_path)
    before = path.read_bytes()
    window = open_window(qtbot, tmp_path, path)
    assert window.counts_label.text().endswith("in trash")  # counted as it is, unwritten
    answers = window.edits.ask
    answers.migrate = False
    trace_id = select_row(window, 0)
    editor = window.detail.editor
    editor.content.setPlainText("Edited before the migration")
    window.window_actions.save.trigger()
    [plan] = answers.migrations_asked
    assert plan.agentos and plan.backup.parent == path.parent
    assert plan.backup.name.startswith(f"agentos.sqlite.backup-pre-{schema.SCHEMA_VERSION}-")
    assert any("journal" in change for change in plan.changes)
    assert path.read_bytes() == before  # kept as it is: nothing written
    assert not plan.backup.exists()
    assert "Nothing was changed" in window.statusBar().currentMessage()
    assert editor.dirty  # the edit waits in the editor

    answers.migrate = True
    window.window_actions.save.trigger()
    wait_idle(qtbot, window)
    assert len(answers.migrations_asked) == 2
    assert plan.backup.exists()
    with Brain.open(path) as brain:
        assert brain.get(trace_id).content == "Edited before the migration"
        assert brain.pending_migration() is None
    editor.content.setPlainText("A second edit")
    window.window_actions.save.trigger()
    assert len(answers.migrations_asked) == 2  # once per brain
    window.close()


def test_no_upkeep_writes_to_an_agentos_brain_before_the_person_agreed(qtbot, tmp_path):
    # The upkeep's sweep and vectors are writes: they would migrate the brain unasked.
    path = agentos_copy(tmp_path)
    window = open_window(qtbot, tmp_path, path)
    assert window.session.migration_pending
    assert window.semantic.upkeep is None and window.semantic.start_backfill() is False
    select_row(window, 0)
    window.detail.editor.content.setPlainText("Edited, and migrated")
    window.window_actions.save.trigger()
    assert window.edits.ask.migrations_asked and not window.session.migration_pending
    qtbot.waitUntil(lambda: window.semantic.upkeep is not None, timeout=WAIT_MS)
    window.close()
