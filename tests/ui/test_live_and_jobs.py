"""Live refresh from another process, the job runner, and the detail tabs."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
from PySide6.QtWidgets import QMessageBox

from memgui.core.brain import Brain
from memgui.core.progress import Cancelled, Progress
from memgui.core.storage.db import Database
from memgui.ui.jobs import JobRunner
from memgui.ui.models.detail_models import HistoryModel, LinksModel, NeighboursModel
from memgui.ui.semantic.shared_sweep import SWEEP_JOB
from memgui.ui.window.live_refresh import POLL_MS
from tests.support.paths import ROOT, SHARED
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, select_row, wait_idle


@pytest.fixture
def live_window(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path, live=True)
    yield window
    window.close()


@pytest.mark.slow
def test_another_process_writing_shows_up_within_a_second(qtbot, live_window, brain_path):
    window = live_window
    trace_id = select_row(window, 0)
    window.detail.editor.content.setPlainText("My unsaved edit")
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)
    assert POLL_MS <= 1000  # what "within a second" rests on: the watcher looks that often
    script = (  # one commit: the watcher sees both changes in one look
        "import sys\n"
        "from memgui.core.brain import Brain\n"
        "with Brain.open(sys.argv[1], actor='cli') as b, b.batch():\n"
        "    b.add('Written by another process', tags=['outside'])\n"
        "    t = b.get(sys.argv[2])\n"
        "    b.update(t.id, {'content': 'Changed outside'}, expect_version=t.version)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script, str(brain_path), trace_id], cwd=ROOT, check=True, timeout=60
    )
    qtbot.waitUntil(lambda: window.model.rowCount() == 6, timeout=WAIT_MS)
    qtbot.waitUntil(
        lambda: (
            "Changed outside"
            in [window.model.index(r, 0).data() for r in range(window.model.rowCount())]
        ),
        timeout=WAIT_MS,
    )
    assert "cli added 1 memory, updated 1 memory" in messages
    editor = window.detail.editor
    assert editor.content.toPlainText() == "My unsaved edit"  # kept…
    assert editor.banner.isVisible() and "cli" in editor.banner.text()  # …and flagged


def test_own_edits_are_not_announced_as_someone_elses(qtbot, live_window):
    window = live_window
    select_row(window, 0)
    window.detail.editor.content.setPlainText("Mine")
    window.window_actions.save.trigger()
    window.statusBar().clearMessage()
    window.watcher.poll()
    assert window.statusBar().currentMessage() == ""


def counting(n: int, fail_at: int | None = None):
    for i in range(n):
        if i == fail_at:
            raise ValueError(f"failed at {i}")
        yield Progress(i + 1, n, f"step {i + 1}")
    return "done"


def test_job_reports_progress_then_finished(qtbot):
    runner = JobRunner()
    job = runner.start("count", lambda: counting(3))
    seen: list[Progress] = []
    job.progress.connect(seen.append)
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS) as finished:
        pass
    assert finished.args == ["done"]
    qtbot.waitUntil(lambda: len(seen) == 3, timeout=WAIT_MS)
    assert [p.done for p in seen] == [1, 2, 3] and runner.active_jobs == []


def test_job_failure_is_reported_not_raised(qtbot):
    runner = JobRunner()
    job = runner.start("count", lambda: counting(3, fail_at=1))
    with qtbot.waitSignal(job.failed, timeout=WAIT_MS) as failed:
        pass
    assert isinstance(failed.args[0], ValueError)


def test_cancel_stops_at_the_next_yield_and_lets_the_core_unwind(qtbot):
    unwound: list[str] = []

    def endless():
        try:
            while True:
                yield Progress(0, None, "waiting")
        except Cancelled:
            unwound.append("rolled back")
            raise

    runner = JobRunner()
    job = runner.start("endless", endless)
    with qtbot.waitSignal(job.progress, timeout=WAIT_MS):
        pass
    job.cancel()
    with qtbot.waitSignal(job.cancelled, timeout=WAIT_MS):
        pass
    assert unwound == ["rolled back"] and job.done


def test_cancel_before_start_never_runs_the_generator(qtbot):
    started: list[int] = []

    def never():
        started.append(1)
        yield Progress(0)

    def until_cancelled():
        never = threading.Event()  # it holds the only thread until it is cancelled
        while not never.wait(0.01):  # a step every 10 ms
            yield Progress(0, None, "holding the thread")

    runner = JobRunner(max_threads=1)
    blocker = runner.start("first", until_cancelled)
    job = runner.start("second", never)
    job.cancel()
    blocker.cancel()  # frees the only thread, so the queued job comes up at once
    with qtbot.waitSignal(job.cancelled, timeout=WAIT_MS):
        pass
    assert started == [] and blocker is not None
    assert runner.shutdown(WAIT_MS)


def test_window_close_asks_then_cancels_running_jobs(qtbot, live_window, monkeypatch):
    def endless():
        while True:
            yield Progress(0, None, "waiting")

    asked = []

    def answer(*args, **kwargs):
        asked.append(args[2])
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", answer)
    job = live_window.runner.start("endless", endless)
    qtbot.waitUntil(lambda: live_window.job_label.text() == "endless…", timeout=WAIT_MS)
    live_window.close()
    assert asked and "endless" in asked[0] and job.cancel_requested
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)


def test_opening_another_brain_never_asks_about_a_running_sweep(qtbot, live_window, monkeypatch):
    """A shared brain's TTL sweep commits on its own connection: cancelling it loses nothing,
    so closing or opening another brain does not ask about it."""

    def endless():
        while True:
            yield Progress(0, None, "sweeping expired memories")

    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a[2]))
    job = live_window.runner.start(SWEEP_JOB, endless)
    qtbot.waitUntil(lambda: job in live_window.runner.active_jobs, timeout=WAIT_MS)
    assert live_window.import_export.confirm_close("open another brain")
    live_window.close()
    assert asked == []
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)


def test_window_stays_open_when_the_person_keeps_the_job(qtbot, live_window, monkeypatch):
    def endless():
        while True:
            yield Progress(0, None, "waiting")

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.No)
    job = live_window.runner.start("endless", endless)
    qtbot.waitUntil(lambda: live_window.job_label.text() == "endless…", timeout=WAIT_MS)
    live_window.show()
    live_window.close()
    assert live_window.isVisible() and not job.cancel_requested
    job.cancel()
    qtbot.waitUntil(lambda: job.done, timeout=WAIT_MS)


def test_detail_models_pass_the_model_tester(qtmodeltester, session):
    a, b = session.brain.list_ids()[:2]
    session.brain.link(a, b, "relates_to")
    session.brain.update(a, {"content": "edited"}, expect_version=1)
    node = session.brain.add_node("Python", "entity").id
    memory = session.brain.add_node("memory", "memory", {"trace_id": a}).id
    session.brain.add_edge(memory, node, "mentions")
    links, history, neighbours = LinksModel(), HistoryModel(), NeighboursModel()
    links.set_items(session.brain.related(a))
    history.set_items(session.brain.history(a))
    neighbours.set_items(session.brain.neighbours(a, 2))
    for model in (links, history, neighbours):
        assert model.rowCount() > 0
        qtmodeltester.check(model)
    changes = [history.index(r, 3).data() for r in range(history.rowCount())]
    assert changes[0] == "created" and "update: content" in changes
    assert any(c.startswith("linked ↔") and "(relates_to)" in c for c in changes)
    assert neighbours.index(0, 2).data() == "Python"


def test_links_tab_add_open_remove_and_history_restore(qtbot, live_window):
    window = live_window
    a = select_row(window, 0)
    b = window.model.id_at(1)
    window.edits.ask.link = (b, "relates_to")
    window.detail.setCurrentWidget(window.detail.links)
    window.window_actions.add_link.trigger()
    qtbot.waitUntil(lambda: window.detail.links.model.rowCount() == 1, timeout=WAIT_MS)
    assert [r.id for r in window.session.brain.related(a)] == [b]
    window.detail.links.view.selectRow(0)
    window.detail.links.open_button.click()
    assert window.current_id() == b
    window.detail.setCurrentWidget(window.detail.links)
    qtbot.waitUntil(lambda: window.detail.links.model.rowCount() == 1, timeout=WAIT_MS)
    window.detail.links.view.selectRow(0)
    window.detail.links.remove_button.click()
    assert window.session.brain.related(a) == []
    # History: edit, then restore the first version from the History tab.
    select_row(window, window.model.row_of(a))
    original = window.session.brain.get(a).content
    window.detail.editor.content.setPlainText("Second version")
    window.window_actions.save.trigger()
    window.detail.setCurrentWidget(window.detail.history)
    history = window.detail.history
    qtbot.waitUntil(lambda: history.model.rowCount() >= 2, timeout=WAIT_MS)
    oldest = history.model.rowCount() - 1
    assert history.model.item_at(oldest).op == "add"
    history.view.selectRow(oldest)
    history.restore_button.click()
    assert window.session.brain.get(a).content == original
    window.window_actions.undo.trigger()
    assert window.session.brain.get(a).content == "Second version"


def test_opening_a_file_with_several_brains_asks_which(qtbot, tmp_path, live_window):
    path = tmp_path / "two.sqlite"
    for brain_id in ("alpha", "beta"):
        with Brain(Database(path), brain_id, "test") as brain:
            brain.add(f"memory of {brain_id}")
    live_window.files.ask_brain_id = lambda _path, ids: ids[1]
    assert live_window.files.open_path(path)
    wait_idle(qtbot, live_window)
    assert live_window.session.brain_id == "beta"
    assert "two.sqlite [beta]" in live_window.windowTitle()
    assert live_window.model.index(0, 0).data() == "memory of beta"


AGENTOS_BRAIN = SHARED / "fixtures" / "agentos" / "brain.sqlite"


def test_a_change_without_journal_rows_reloads_the_shown_memory(qtbot, tmp_path):
    # AgentOS (or any program) writing a brain memgui has not migrated leaves no journal:
    # the window only learns "the brain changed", and reads the shown memory again.
    import shutil

    import apsw

    path = tmp_path / "agentos.sqlite"
    shutil.copyfile(AGENTOS_BRAIN, path)
    window = open_window(qtbot, tmp_path, path, live=True)
    try:
        trace_id = select_row(window, 0)
        agentos = apsw.Connection(str(path))
        agentos.execute(
            "UPDATE memory_traces SET content = 'rewritten by AgentOS' WHERE id = ?", (trace_id,)
        )
        agentos.close()
        editor = window.detail.editor
        qtbot.waitUntil(
            lambda: editor.content.toPlainText() == "rewritten by AgentOS", timeout=WAIT_MS
        )
        assert not editor.dirty
    finally:
        window.close()
