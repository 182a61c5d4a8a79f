"""Import and export in the window on a shared brain (a real PostgreSQL), through the same
windows as on a file: a dropped folder planned against a staged file of the brain,
reviewed, committed on the server and reverted there; a commit cancelled halfway writing
nothing; a commit refused because the server changed, planned again; File ▸ Export… in
every format the command line exports a shared brain in."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import apsw
import pytest

from memgui.core.io import EXPORT_FORMATS
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_import import SharedImport
from memgui.ui.importing.import_jobs import COMMIT_JOB, PLAN_JOB
from memgui.ui.importing.import_record_editor import RecordEditor
from tests.support.brains import fill
from tests.support.import_export import (
    apply_and_wait,
    cancel_at,
    commit_and_wait,
    drop_and_plan,
    make_dialog,
    open_and_plan,
    run_export,
    wait_for_plan,
    write_csv,
    write_notes,
)
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS

pytestmark = pytest.mark.slow  # a real server

EVERYTHING = TraceFilter(include_deleted=True)
NOTES = {
    "alpha.md": "# Alpha\n\nThe team decided to keep shared memories on the server.\n",
    "beta.md": "# Beta\n\nEach agent reads the same brain from its own machine.\n",
    "gamma.md": "# Gamma\n\nImports are reviewed before they are written.\n",
}


@pytest.fixture
def filled(pg_address: str) -> str:
    with SharedBrain.open(pg_address, actor="test") as brain:
        fill(brain)  # type: ignore[arg-type]
    return pg_address


def test_a_dropped_folder_is_planned_reviewed_committed_and_reverted_on_the_server(
    qtbot, tmp_path: Path, filled: str
) -> None:
    window = open_shared_window(qtbot, tmp_path, filled)
    try:
        assert window.window_actions.import_file.isEnabled()
        assert window.import_export.import_folder.isEnabled()
        with SharedBrain.open(filled, actor="check") as check:
            before = check.count()
            dialog = drop_and_plan(qtbot, window, write_notes(tmp_path / "vault", NOTES))
            assert dialog.run.plan.counts["new"] == len(NOTES)
            staging = dialog.run.staging
            assert staging is not None and staging.current is not None
            staged_file = staging.current.staged.db.path
            assert staged_file.exists()
            assert check.count() == before  # a plan writes nothing on the server
            # The review's checks read the staged file: an edited record is checked again.
            editor = RecordEditor(
                dialog.run.plan.records[0],
                lambda _r, done, failed: dialog.run.check_record(0, done, failed),
                dialog,
            )
            qtbot.addWidget(editor)
            editor.content.setPlainText("Alpha: the team keeps its memories on the server")
            assert apply_and_wait(qtbot, editor)

            result = commit_and_wait(qtbot, dialog)
            assert result.imported == len(NOTES)
            assert check.count() == before + len(NOTES)
            assert len(check.batch_entries(result.batch_id)) == len(NOTES)  # one batch
            contents = {t.content for t in check.list_traces(EVERYTHING, limit=200)}
            assert any("reviewed before they are written" in c for c in contents)
            assert "Alpha: the team keeps its memories on the server" in contents
            qtbot.waitUntil(lambda: window.model.rowCount() == before + len(NOTES), timeout=WAIT_MS)
            assert window.session.undo_stack.undoText().startswith("Import 3")
            # The window's own import is no agent's activity: marked reviewed on the server.
            qtbot.waitUntil(
                lambda: all(
                    b.batch_id != result.batch_id
                    for b in check.unreviewed_batches(limit=200).batches
                ),
                timeout=WAIT_MS,
            )

            dialog.review.revert_button.click()  # the import's undo step, on the server
            assert check.count() == before
            window.session.undo_stack.redo()
            assert check.count() == before + len(NOTES)
            dialog.close()
            assert not staged_file.exists()  # the staged copy goes with the window
    finally:
        window.close()


def test_a_plan_cancelled_while_staging_leaves_no_staged_file(
    qtbot, tmp_path: Path, filled: str, monkeypatch
) -> None:
    scratch = tmp_path / "scratch"  # the staged copies' temporary folder, for this test
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    window = open_shared_window(qtbot, tmp_path, filled)
    try:
        cancel_at(monkeypatch, window.runner, PLAN_JOB, lambda event: True)
        dialog = window.import_export.import_path(write_notes(tmp_path / "vault", NOTES))
        assert dialog is not None
        with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as blocker:
            pass
        assert blocker.args == ["plan"] and dialog.run.plan is None
        qtbot.waitUntil(
            lambda: all(j.name != PLAN_JOB for j in window.runner.active_jobs), timeout=WAIT_MS
        )
        assert list(scratch.iterdir()) == []
    finally:
        window.close()


def test_a_commit_cancelled_halfway_writes_nothing_on_the_server(
    qtbot, tmp_path: Path, pg_address: str, monkeypatch
) -> None:
    rows = 2_500  # the commit reports progress (and can stop) every 2,000 records
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", rows))
        assert dialog.run.plan.counts["new"] == rows
        cancel_at(monkeypatch, window.runner, COMMIT_JOB, lambda event: event.done > 0)
        dialog.commit()
        with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as blocker:
            pass
        assert blocker.args == ["commit"]
        with SharedBrain.open(pg_address, actor="check") as check:
            assert check.count(EVERYTHING) == 0
            assert window.session.undo_stack.count() == 0
            assert "nothing was written" in dialog.review.summary_label.text()
            result = commit_and_wait(qtbot, dialog)  # the same plan, whole, afterwards
            assert result.imported == rows and check.count() == rows
        dialog.close()
    finally:
        window.close()


def test_a_commit_the_server_changed_under_is_planned_again(
    qtbot, tmp_path: Path, pg_address: str, agentos_copy: Path
) -> None:
    """A re-import plans an update of a trace; another writer edits that trace before the
    commit: nothing is written, the import is planned again and the new plan goes in."""
    with apsw.Connection(str(agentos_copy)) as conn:
        trace_id, tags = conn.execute(
            "SELECT id, tags FROM memory_traces WHERE deleted = 0 ORDER BY id LIMIT 1"
        ).fetchone()
    with SharedBrain.open(pg_address, actor="test") as shared, SharedImport(shared) as job:
        run_to_end(job.commit(run_to_end(job.plan(agentos_copy, "sqlite"))))
    with apsw.Connection(str(agentos_copy)) as conn:
        conn.execute(
            "UPDATE memory_traces SET tags = ? WHERE id = ?",
            (json.dumps([*json.loads(tags), "brought-later"]), trace_id),
        )
    window = open_shared_window(qtbot, tmp_path, pg_address)
    try:
        dialog = open_and_plan(qtbot, window, agentos_copy)
        first = dialog.run.plan
        assert first.counts["update"] == 1
        with SharedBrain.open(pg_address, actor="agentos") as other:
            other.update(trace_id, {"content": "edited on another machine"})
            count = other.count(EVERYTHING)
            with qtbot.waitSignal(dialog.run.outdated, timeout=WAIT_MS) as refused:
                dialog.review.commit_button.click()
            assert "changed on the server since the import was planned" in refused.args[0]
            assert other.count(EVERYTHING) == count
            assert "brought-later" not in other.get(trace_id).tags
            qtbot.waitUntil(lambda: dialog.run.plan is not first, timeout=WAIT_MS)
            wait_for_plan(qtbot, dialog)
            assert "Nothing was written" in dialog.review.summary_label.text()
            fresh = dialog.run.plan
            assert fresh.counts["update"] == 0 and fresh.counts["new"] == 1
            assert commit_and_wait(qtbot, dialog).imported == 1
            assert other.count(EVERYTHING) == count + 1
        dialog.close()
    finally:
        window.close()


def test_export_writes_a_shared_brain_in_every_format(qtbot, tmp_path: Path, filled: str) -> None:
    window = open_shared_window(qtbot, tmp_path, filled)
    try:
        assert window.import_export.export.isEnabled()
        with SharedBrain.open(filled, actor="check") as check:
            live = check.count()
        dialog = make_dialog(qtbot, window)
        for fmt in EXPORT_FORMATS:
            dest = tmp_path / "out" / f"team-{fmt}"
            dest.parent.mkdir(exist_ok=True)
            run_export(qtbot, dialog, fmt, dest)
            result = dialog.export_result
            assert result is not None, dialog.status.text()
            assert result.exported + len(result.refused) == live
        data = json.loads((tmp_path / "out" / "team-json").read_text())
        assert len(data["traces"]) == live
        with apsw.Connection(str(tmp_path / "out" / "team-sqlite")) as conn:
            (copied,) = conn.execute("SELECT count(*) FROM memory_traces").fetchone()
        assert copied == live
        assert list((tmp_path / "out" / "team-markdown").rglob("*.md"))
    finally:
        window.close()


def test_the_windows_own_import_is_not_taken_for_another_programs_write(
    qtbot, tmp_path: Path, filled: str
) -> None:
    """Written on a connection of the import's job, its change notices are the window's
    own: no "another program changed" for them; another machine's write right after is."""
    window = open_shared_window(qtbot, tmp_path, filled, live=True)
    try:
        qtbot.waitUntil(
            lambda: window.shared_live is not None and window.shared_live.listener is not None,
            timeout=WAIT_MS,
        )
        said: list[str] = []
        window.statusBar().messageChanged.connect(said.append)
        dialog = open_and_plan(qtbot, window, write_notes(tmp_path / "vault", NOTES))
        assert commit_and_wait(qtbot, dialog).imported == len(NOTES)
        with SharedBrain.open(filled, actor="agentos") as other:
            added = other.add("written by another machine's agent after the import")
        # Notices reach the window in commit order: once this one is in, the import's were.
        qtbot.waitUntil(lambda: window.model.row_of(added.id) >= 0, timeout=WAIT_MS)
        heard = [m for m in said if m.startswith("another program changed")]
        assert heard == ["another program changed 1 memories of the shared brain"], said
        dialog.close()
    finally:
        window.close()


def test_the_screenshot_of_an_import_review_on_a_shared_brain_writes_nothing(
    qapp, capsys, tmp_path: Path, filled: str, monkeypatch
) -> None:
    """`memgui --brain ADDRESS screenshot OUT.png --import PATH`: the review page drawn
    from a plan against a staged file of the brain; nothing on the server, no staged file
    left."""
    from PySide6.QtGui import QImage

    from tests.support.cli import run_cli

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with SharedBrain.open(filled, actor="check") as check:
        before = check.count(EVERYTHING)
    out = tmp_path / "review.png"
    shot = run_cli(
        capsys, filled, "screenshot", str(out), "--import", str(write_notes(tmp_path / "v", NOTES))
    )
    assert shot.code == 0, shot.err
    assert shot.json()["plan"]["new"] == len(NOTES)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1180, 760)
    with SharedBrain.open(filled, actor="check") as check:
        assert check.count(EVERYTHING) == before
    assert [p for p in scratch.iterdir() if p.name.startswith("memgui-import-")] == []
