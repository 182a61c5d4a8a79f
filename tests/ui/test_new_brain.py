"""File ▸ New brain…: a free name is proposed, and the open brain is never replaced."""

from __future__ import annotations

from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.ui.window import brain_files
from tests.support.window import open_window


def answer_save_dialog(monkeypatch, answer, asked: list[str] | None = None) -> None:
    """The file dialog's answer: `answer(proposed)` is the path chosen."""

    def get_save_file_name(_parent, _title, proposed, _filter):
        if asked is not None:
            asked.append(proposed)
        return answer(proposed), ""

    monkeypatch.setattr(brain_files.QFileDialog, "getSaveFileName", get_save_file_name)


def test_new_brain_proposes_a_free_name_beside_the_open_one(
    qtbot, tmp_path, brain_path, monkeypatch
):
    window = open_window(qtbot, tmp_path, brain_path)
    asked: list[str] = []
    answer_save_dialog(monkeypatch, lambda _proposed: "", asked)
    window.window_actions.new_brain.trigger()
    assert asked == [str(brain_path.parent / "brain-2.sqlite")]  # brain.sqlite is open
    window.close()


def test_the_open_brain_is_never_replaced_by_a_new_one(qtbot, tmp_path, brain_path, monkeypatch):
    window = open_window(qtbot, tmp_path, brain_path)
    live = window.session.brain.count(TraceFilter())
    answer_save_dialog(monkeypatch, lambda _proposed: str(brain_path))  # "replace": yes
    window.window_actions.new_brain.trigger()
    assert "is the brain open now" in window.statusBar().currentMessage()
    assert window.session.path == brain_path
    with Brain.open(brain_path) as brain:
        assert brain.count(TraceFilter()) == live
    other = tmp_path / "other.sqlite"
    with Brain.open(other) as brain:
        brain.add("kept")
    answer_save_dialog(monkeypatch, lambda _proposed: str(other))
    window.window_actions.new_brain.trigger()
    assert "exists already" in window.statusBar().currentMessage()
    assert window.session.path == brain_path
    fresh = tmp_path / "fresh.sqlite"
    answer_save_dialog(monkeypatch, lambda _proposed: str(fresh))
    window.window_actions.new_brain.trigger()
    assert Path(window.session.path) == fresh and fresh.exists()
    window.close()


def test_free_names_count_up(tmp_path):
    assert brain_files.free_brain_name(tmp_path) == tmp_path / "brain.sqlite"
    (tmp_path / "brain.sqlite").touch()
    (tmp_path / "brain-2.sqlite").touch()
    assert brain_files.free_brain_name(tmp_path) == tmp_path / "brain-3.sqlite"
