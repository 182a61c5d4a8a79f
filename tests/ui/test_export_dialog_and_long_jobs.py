"""The export dialog and the table during long jobs: a
bounded refused list, the counts of a newly opened brain, a typed folder name kept across
format switches, and a search that never waits for an export."""

from __future__ import annotations

import threading
from contextlib import contextmanager

from PySide6.QtCore import QItemSelectionModel

from memgui.core.brain import Brain
from memgui.core.io.exporters.export_common import ExportResult, Refusal
from memgui.core.progress import Progress
from memgui.ui.exporting.export_dialog import EVERYTHING, SELECTED, SHOWN
from memgui.ui.exporting.export_refused import REFUSED_SHOWN
from tests.support.import_export import (
    WAIT_MS,
    make_dialog,
)
from tests.support.waiting import WAIT_S


def test_a_long_refused_list_shows_a_bounded_part(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)
    brain = window.session.brain
    asked: list[int] = []
    get_many = brain.get_many

    def counting_get_many(ids):
        asked.append(len(ids))
        return get_many(ids)

    brain.get_many = counting_get_many
    total = 5_000
    refused = tuple(
        Refusal(f"mt_{n:05}", "category", "no agent-memory category") for n in range(total)
    )
    dialog._on_finished(ExportResult(exported=2, refused=refused))
    assert dialog.refused_table.rowCount() == REFUSED_SHOWN
    assert max(asked) <= REFUSED_SHOWN  # the first lines of the shown rows only
    more = dialog.refused_list.more_label
    assert more.isVisibleTo(dialog) and f"{total - REFUSED_SHOWN:,} more" in more.text()
    assert "5,000 refused" in dialog.status.text() or "5000 refused" in dialog.status.text()
    saved = dialog.save_refused(str(tmp_path / "refused.csv"))
    assert len(saved.read_text().splitlines()) == total + 1  # the saved list has them all


def test_the_dialog_follows_a_newly_opened_brain(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)
    flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
    window.table.selectionModel().select(window.model.index(0, 0), flags)
    dialog.scope_buttons[SELECTED].setChecked(True)
    other = tmp_path / "other.sqlite"
    with Brain.open(other, actor="test") as brain:
        for n in range(3):
            brain.add(f"Other brain memory {n}")
    assert window.files.open_path(other)
    qtbot.waitUntil(lambda: window.model.rowCount() == 3 and not window.model.busy, timeout=WAIT_MS)
    assert "3 memories the table shows" in dialog.scope_buttons[SHOWN].text()
    assert "0 selected" in dialog.scope_buttons[SELECTED].text()
    assert dialog.scope_group.checkedId() == EVERYTHING
    window.table.selectionModel().select(window.model.index(2, 0), flags)
    assert "1 selected" in dialog.scope_buttons[SELECTED].text()  # the new table is followed


def test_switching_folder_formats_keeps_a_dotted_folder_name(qtbot, window, tmp_path):
    dialog = make_dialog(qtbot, window)

    def switch(fmt: str) -> str:
        dialog.format_box.setCurrentIndex(dialog.format_box.findData(fmt))
        return dialog.dest_edit.text()

    switch("markdown")
    dialog.dest_edit.setText(str(tmp_path / "notes.v2"))
    assert switch("obsidian") == str(tmp_path / "notes.v2")
    assert switch("json") == str(tmp_path / "notes.v2.json")
    assert switch("jsonl") == str(tmp_path / "notes.v2.jsonl")
    assert switch("markdown") == str(tmp_path / "notes.v2")
    dialog.dest_edit.setText(str(tmp_path / "out"))
    assert switch("sqlite") == str(tmp_path / "out.sqlite")


@contextmanager
def busy_pool(qtbot, window):
    """Both threads of the window's long-job pool taken by exports that run until the test
    lets them go; yields the jobs. (A context, not a fixture: pytest-qt closes the window
    before fixtures end, and a close while jobs run asks a question nobody answers.)"""
    release = threading.Event()
    running: list[int] = []

    def long_job(n: int):
        running.append(n)
        release.wait(2 * WAIT_S)  # outlasts every wait of the test, which ends it
        yield Progress(1, 1, "done")

    jobs = [window.runner.start("export", lambda n=n: long_job(n)) for n in range(4)]
    try:
        qtbot.waitUntil(lambda: len(running) >= 2, timeout=WAIT_MS)  # every thread is taken
        yield jobs
    finally:
        release.set()
        qtbot.waitUntil(lambda: all(job.done for job in jobs), timeout=WAIT_MS)


def test_a_search_does_not_wait_for_long_jobs(qtbot, window):
    with busy_pool(qtbot, window) as jobs:
        window.search_bar.field.setText("Alice")
        window.model.set_search("Alice")
        qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)
        # Answered while every long job still runs: it never waited for one of them.
        assert window.model.rowCount() == 1 and not any(job.done for job in jobs)


def test_the_counts_do_not_wait_for_long_jobs(qtbot, window):
    with busy_pool(qtbot, window) as jobs:
        window.counts_label.setText("")
        window.update_counts()
        qtbot.waitUntil(lambda: bool(window.counts_label.text()), timeout=WAIT_MS)
        assert not any(job.done for job in jobs)
