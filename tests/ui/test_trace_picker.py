"""The link picker searches in a job on its own connection, never on the GUI thread."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest
import shiboken6

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.ui.dialogs.trace_picker import TracePicker
from memgui.ui.jobs import JobRunner
from tests.support.waiting import WAIT_MS, WAIT_S


@pytest.fixture
def brain_path(tmp_path: Path) -> Path:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path) as brain:
        brain.add("alpha centauri is the nearest star system")
        brain.add("beta carotene colours carrots")
    return path


def picker_for(qtbot, brain_path: Path, open_reader=None) -> tuple[TracePicker, Brain]:
    gui_brain = Brain.open(brain_path)

    def forbidden(*_args, **_kwargs):
        raise AssertionError("the GUI thread's brain must not search")

    gui_brain.search = forbidden
    runner = JobRunner()
    picker = TracePicker(
        gui_brain,
        exclude="",
        runner=runner,
        open_reader=open_reader or (lambda: Brain.open(brain_path)),
    )
    qtbot.addWidget(picker)
    picker._runner_keepalive = runner  # the runner lives as long as the dialog
    return picker, gui_brain


def settle(qtbot, picker: TracePicker) -> None:
    """Wait for every search job, the dropped ones too."""
    qtbot.waitUntil(lambda: not picker._runner_keepalive.active_jobs, timeout=WAIT_MS)


def shown(picker: TracePicker) -> list[str]:
    return [picker.results.item(i).text() for i in range(picker.results.count())]


def test_search_runs_as_a_job_and_fills_the_list(qtbot, brain_path: Path) -> None:
    picker, gui_brain = picker_for(qtbot, brain_path)
    picker.field.setText("carrots")
    picker._search()
    assert picker.searching and picker.message.text() == "Searching…"
    qtbot.waitUntil(lambda: not picker.searching, timeout=WAIT_MS)
    assert shown(picker) == ["beta carotene colours carrots"]
    assert picker.choice() is not None
    settle(qtbot, picker)
    gui_brain.close()


def test_only_the_latest_query_is_answered(qtbot, brain_path: Path) -> None:
    picker, gui_brain = picker_for(qtbot, brain_path)
    picker.field.setText("alpha")
    picker._search()
    picker.field.setText("carrots")
    picker._search()
    qtbot.waitUntil(lambda: not picker.searching, timeout=WAIT_MS)
    settle(qtbot, picker)  # the older answer, whenever it lands, changes nothing
    assert shown(picker) == ["beta carotene colours carrots"]
    gui_brain.close()


def test_closing_the_dialog_while_it_searches(qtbot, brain_path: Path) -> None:
    gone = threading.Event()

    def open_reader() -> Brain:  # the search goes on only once the dialog is gone
        gone.wait(WAIT_S)
        return Brain.open(brain_path)

    runner = JobRunner()
    picker = TracePicker(None, "", runner=runner, open_reader=open_reader)
    picker.field.setText("alpha")
    picker._search()
    picker.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(picker), timeout=WAIT_MS)
    gone.set()
    answered: list[object] = []
    job = runner.active_jobs[0]
    job.finished.connect(answered.append)
    # The answer arrives after the dialog is gone: nothing is raised.
    qtbot.waitUntil(lambda: bool(answered) and not runner.active_jobs, timeout=WAIT_MS)


def test_nothing_found_and_failures_say_so(qtbot, brain_path: Path) -> None:
    picker, gui_brain = picker_for(qtbot, brain_path)
    picker.field.setText("zebra")
    picker._search()
    qtbot.waitUntil(lambda: not picker.searching, timeout=WAIT_MS)
    assert shown(picker) == [] and picker.message.text() == "No memory matches."

    def unavailable():
        raise MemguiError("the brain file is gone")

    broken, other = picker_for(qtbot, brain_path, open_reader=unavailable)
    broken.field.setText("alpha")
    broken._search()
    qtbot.waitUntil(lambda: not broken.searching, timeout=WAIT_MS)
    assert broken.message.text() == "the brain file is gone" and shown(broken) == []
    gui_brain.close()
    other.close()


def test_searches_share_one_connection_closed_with_the_dialog(qtbot, brain_path: Path) -> None:
    opened: list[Brain] = []

    def open_reader() -> Brain:
        opened.append(Brain.open(brain_path))
        return opened[-1]

    picker, gui_brain = picker_for(qtbot, brain_path, open_reader=open_reader)
    for query in ("alpha", "carrots"):
        picker.field.setText(query)
        picker._search()
        qtbot.waitUntil(lambda: not picker.searching, timeout=WAIT_MS)
        settle(qtbot, picker)
    assert shown(picker) == ["beta carotene colours carrots"]
    assert len(opened) == 1
    picker.reject()
    with pytest.raises(apsw.ConnectionClosedError):
        opened[0].search("alpha")
    gui_brain.close()
