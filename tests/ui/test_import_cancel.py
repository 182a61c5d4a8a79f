"""Cancelling an import while it plans and while it commits leaves the brain as it was.

Cancel is requested from the job's progress report as the worker emits it (a direct
connection runs in the worker at the yield), so it lands inside the step deterministically —
for the commit, at a progress event inside the write transaction. The connection is made
before the job may run, so no report goes by unseen.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt

from memgui.ui.importing.import_dialog import ImportDialog
from memgui.ui.importing.import_jobs import COMMIT_JOB, PLAN_JOB
from tests.support.import_export import (
    CORPORA,
    WAIT_MS,
    at_next_reports,
    brain_digest,
    cancel_at,
    open_and_plan,
    write_csv,
)
from tests.support.waiting import WAIT_S

COMMIT_ROWS = 2_500  # the commit reports progress (and can stop) every 2,000 records


def test_cancel_while_planning_stops_and_writes_nothing(qtbot, window, monkeypatch):
    before = brain_digest(window.session.path)
    dialog = ImportDialog(window, CORPORA / "obsidian-help")  # ~2,500 notes: time to stop
    qtbot.addWidget(dialog)
    dialog.show()
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)
    reported = []

    def note_and_stop(job, event) -> None:  # at the first report
        reported.append(event)
        job.cancel()

    at_next_reports(monkeypatch, window.runner, PLAN_JOB, note_and_stop)
    dialog.start()
    with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as blocker:
        pass
    assert len(reported) == 1  # stopped at once: no step reported after the one that asked
    assert blocker.args == ["plan"]
    assert dialog.run.plan is None
    assert any("cancelled; nothing written" in m for m in messages)
    assert brain_digest(window.session.path) == before


def test_cancelling_a_replan_keeps_the_earlier_plan(qtbot, window, tmp_path, monkeypatch):
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", COMMIT_ROWS))
    first = dialog.run.plan
    cancel_at(monkeypatch, window.runner, PLAN_JOB, lambda event: True)
    dialog.replan(first.options)
    with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS):
        pass
    assert dialog.run.plan is first
    assert dialog.pages.currentWidget() is dialog.review


def test_cancel_while_committing_rolls_back(qtbot, window, tmp_path, monkeypatch):
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "facts.csv", COMMIT_ROWS))
    assert dialog.run.plan.counts["new"] == COMMIT_ROWS
    before = brain_digest(window.session.path)
    count = window.session.brain.count()
    cancel_at(monkeypatch, window.runner, COMMIT_JOB, lambda event: event.done > 0)
    dialog.commit()
    with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as blocker:
        pass
    assert blocker.args == ["commit"]
    assert dialog.run.result is None
    assert window.session.undo_stack.count() == 0
    assert "nothing was written" in dialog.review.summary_label.text()
    assert brain_digest(window.session.path) == before
    assert window.session.brain.count() == count
    # The same plan commits whole afterwards.
    with qtbot.waitSignal(dialog.run.committed, timeout=WAIT_MS) as done:
        dialog.review.commit_button.click()
    assert done.args[0].imported == COMMIT_ROWS
    assert window.session.brain.count() == count + COMMIT_ROWS


def test_opening_another_brain_closes_the_import_of_the_first(
    qtbot, window, brain_path, tmp_path, monkeypatch
):
    from PySide6.QtWidgets import QMessageBox

    from memgui.core.brain import Brain

    before = brain_digest(brain_path)
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "rows.csv", 10))
    other = tmp_path / "other.sqlite"
    with Brain.open(other) as brain:
        brain.add("the other brain")
    assert window.files.open_path(other)
    assert not dialog.isVisible()  # it cannot commit into a brain that is closed
    assert brain_digest(brain_path) == before
    # While an import is written, opening another brain asks first; "No" keeps everything.
    window.files.open_path(brain_path)
    dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "more.csv", COMMIT_ROWS))
    count = window.session.brain.count()
    asked: list[str] = []

    def answer_no(*args, **_kwargs):
        asked.append(args[2])
        return QMessageBox.StandardButton.No

    monkeypatch.setattr(QMessageBox, "question", answer_no)
    inside, release = threading.Event(), threading.Event()
    at_next_reports(  # hold the worker inside the transaction
        monkeypatch,
        window.runner,
        COMMIT_JOB,
        lambda _job, event: (inside.set(), release.wait(WAIT_S)) if event.done else None,
    )
    dialog.commit()
    qtbot.waitUntil(inside.is_set, timeout=WAIT_MS)
    try:
        assert not window.files.open_path(other)
        assert "Cancel and open another brain?" in asked[0]
        assert window.session.path == brain_path and dialog.isVisible()
    finally:
        release.set()
    with qtbot.waitSignal(dialog.run.committed, timeout=WAIT_MS):
        pass
    assert window.session.brain.count() == count + COMMIT_ROWS


def test_closing_asks_about_an_unsaved_edit_before_a_running_import(qtbot, window, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from memgui.core.progress import Progress
    from tests.support.window import Answers, select_row

    release = threading.Event()

    def slow():
        while not release.wait(0.01):
            yield Progress(0, None, "waiting")

    job = window.runner.start("import", slow)
    window.edits.ask = Answers()
    window.edits.ask.unsaved = "cancel"  # "stay": the window stays, the import goes on
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a[2]))
    select_row(window, 0)
    window.detail.editor.content.setPlainText("not saved yet")
    try:
        assert not window.close()
        assert window.isVisible() and not job.cancel_requested and asked == []
    finally:
        release.set()
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)


def hold_next_plan(monkeypatch, runner) -> tuple[threading.Event, threading.Event]:
    """Hold the next plan's worker at its first progress report, as a reader inside one
    endless read holds it: it cannot see the cancel flag. Returns (held, release); the test
    releases it (the bound only keeps a failing test from leaving a thread behind for good)."""
    held, release = threading.Event(), threading.Event()
    at_next_reports(
        monkeypatch,
        runner,
        PLAN_JOB,
        lambda _job, _event: (held.set(), release.wait(6 * WAIT_S)),
    )
    return held, release


def test_cancel_returns_at_once_however_stuck_the_reader(qtbot, window, monkeypatch):
    before = brain_digest(window.session.path)
    dialog = ImportDialog(window, CORPORA / "obsidian-help")
    qtbot.addWidget(dialog)
    dialog.show()
    held, release = hold_next_plan(monkeypatch, window.runner)
    dialog.start()
    job = dialog.run.job
    qtbot.waitUntil(held.is_set, timeout=WAIT_MS)
    try:
        # The worker is still held: the window stops waiting for it all the same.
        with qtbot.waitSignal(dialog.run.cancelled, timeout=WAIT_MS) as blocker:
            qtbot.mouseClick(dialog.working.cancel_button, Qt.MouseButton.LeftButton)
        assert blocker.args == ["plan"] and not dialog.run.running
        assert "cancelled; nothing written" in window.statusBar().currentMessage()
        assert not job.done and job.cancel_requested
    finally:
        release.set()
    qtbot.waitUntil(lambda: job not in window.runner.active_jobs, timeout=WAIT_MS)
    assert job.done and brain_digest(window.session.path) == before


def test_stuck_plans_left_behind_never_hold_up_the_next_import(
    qtbot, window, tmp_path, monkeypatch
):
    releases, stuck_jobs = [], []
    try:
        for _ in range(2):  # as many as the window's job threads
            stuck = ImportDialog(window, CORPORA / "obsidian-help")
            qtbot.addWidget(stuck)
            stuck.show()
            held, release = hold_next_plan(monkeypatch, window.runner)
            releases.append(release)
            stuck.start()
            stuck_jobs.append(stuck.run.job)
            qtbot.waitUntil(held.is_set, timeout=WAIT_MS)
            stuck.working.cancel_button.click()
        dialog = open_and_plan(qtbot, window, write_csv(tmp_path / "rows.csv", 10))
        assert dialog.run.plan.counts["new"] == 10
        # Closing now asks about nothing: the plans still stopping were cancelled already.
        assert window.import_export.running_jobs() == []
    finally:
        for release in releases:
            release.set()
    qtbot.waitUntil(lambda: not set(stuck_jobs) & set(window.runner.active_jobs), timeout=WAIT_MS)
