"""When search by meaning cannot run, the app says so beside the results, with what to do;
the search settings test the connection."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QSettings

from memgui.core.brain import Brain
from memgui.core.search.embed import OLLAMA_URL_ENV
from memgui.ui.dialogs.settings_dialog import MODEL_KEY, URL_KEY, SettingsDialog
from memgui.ui.jobs import JobRunner
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, wait_idle


@pytest.fixture(autouse=True)
def _no_url_from_env(monkeypatch):
    monkeypatch.delenv(OLLAMA_URL_ENV, raising=False)


@pytest.fixture
def notes_brain(tmp_path):
    path = tmp_path / "notes.sqlite"
    with Brain.open(path, actor="test") as brain:
        brain.add("My automobile stalled this morning")
    return path


def search_by_meaning(qtbot, window, text="automobile"):
    window.search_bar.set_mode("semantic")
    window.search_bar.set_query(text)
    wait_idle(qtbot, window)
    return window.search_bar.meaning_note


def test_ollama_down_is_said_beside_the_results(qtbot, tmp_path, notes_brain, ollama_server):
    window = open_window(qtbot, tmp_path, notes_brain, **{URL_KEY: ollama_server.url})
    ollama_server.stop()
    window.semantic.check_now()
    qtbot.waitUntil(lambda: window.semantic.status == "down", timeout=WAIT_MS)
    note = search_by_meaning(qtbot, window)
    assert note.isVisible()
    assert f"Ollama does not answer at {ollama_server.url}" in note.text()
    assert "ollama serve" in note.text() and "Search settings…" in note.text()
    window.search_bar.set_mode("keyword")
    wait_idle(qtbot, window)
    assert not note.isVisible()  # words asked, words given: nothing to say
    window.close()


def test_a_missing_model_says_which_command_fetches_it(qtbot, tmp_path, notes_brain, ollama_server):
    settings = {URL_KEY: ollama_server.url, MODEL_KEY: "no-such-model"}
    window = open_window(qtbot, tmp_path, notes_brain, **settings)
    qtbot.waitUntil(lambda: window.semantic.status == "model missing", timeout=WAIT_MS)
    note = search_by_meaning(qtbot, window)
    assert "ollama pull no-such-model" in note.text()
    window.close()


def test_nothing_embedded_yet_is_said_too(qtbot, tmp_path, notes_brain, ollama_server):
    os.chmod(notes_brain, 0o444)  # read-only: nothing can be embedded here
    window = open_window(qtbot, tmp_path, notes_brain, **{URL_KEY: ollama_server.url})
    qtbot.waitUntil(lambda: window.semantic.status == "reachable", timeout=WAIT_MS)
    note = search_by_meaning(qtbot, window)
    assert "no memory has a vector yet" in note.text() and "read-only" in note.text()
    window.close()


def test_the_settings_test_the_connection(qtbot, tmp_path, ollama_server):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    runner = JobRunner()
    dialog = SettingsDialog(settings, runner=runner)
    qtbot.addWidget(dialog)
    result = dialog.test_result
    for model, expected in (("", "✓ Ollama answers"), ("no-such-model", "ollama pull")):
        dialog.url.setText(ollama_server.url)
        dialog.model.setText(model)
        dialog.test_button.click()
        qtbot.waitUntil(lambda expected=expected: expected in result.text(), timeout=WAIT_MS)
    ollama_server.stop()
    dialog.test_button.click()
    qtbot.waitUntil(lambda: "does not answer" in result.text(), timeout=WAIT_MS)
    assert "ollama serve" in result.text()
    runner.shutdown()
