"""Search by meaning in the window on a shared brain (a real PostgreSQL), with the real
ollama client against the tests' Ollama-compatible server: the window embeds the memories
that wait (a job on a connection of its own), then the search bar's semantic and hybrid
modes find a paraphrase that keyword search does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.search.embed import OLLAMA_URL_ENV
from memgui.core.shared_brain import SharedBrain
from memgui.ui.dialogs.settings_dialog import MODEL_KEY, URL_KEY
from memgui.ui.main_window import MainWindow
from tests.support.shared_window import open_shared_window
from tests.support.waiting import WAIT_MS
from tests.support.window import wait_idle

pytestmark = pytest.mark.slow  # a real server

STALLED = "My automobile stalled this morning"
TEXTS = (
    STALLED,
    "The mechanic fixed the car engine",
    "Alice prefers dark mode",
    "The cache key includes the locale",
)


@pytest.fixture(autouse=True)
def _no_url_from_env(monkeypatch) -> None:
    monkeypatch.delenv(OLLAMA_URL_ENV, raising=False)


def shown(window: MainWindow) -> list[str]:
    return [window.model.index(r, 0).data() for r in range(window.model.rowCount())]


def search(qtbot, window: MainWindow, mode: str, text: str) -> None:
    window.search_bar.set_mode(mode)
    window.search_bar.set_query(text)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not window.model.busy, timeout=WAIT_MS)


def test_semantic_and_hybrid_search_a_shared_brain_by_meaning(
    qtbot, tmp_path: Path, pg_address: str, ollama_server
) -> None:
    with SharedBrain.open(pg_address, actor="agent") as brain:
        for text in TEXTS:
            brain.add(text)
    values = {URL_KEY: ollama_server.url, MODEL_KEY: "nomic-embed-text"}
    window = open_shared_window(qtbot, tmp_path, pg_address, **values)
    try:
        semantic = window.semantic
        qtbot.waitUntil(lambda: semantic.light.status == "reachable", timeout=WAIT_MS)
        # The window embeds what waits, on the server, with no command run.
        qtbot.waitUntil(lambda: semantic.pending == 0 and not semantic.backfilling, timeout=WAIT_MS)
        with SharedBrain.open(pg_address, actor="check") as check:
            info = check.embedding_info()
        assert info["pending"] == 0 and info["model"] == "nomic-embed-text"
        assert ollama_server.embed_count() >= 1

        search(qtbot, window, "semantic", "vehicle breakdown")
        assert STALLED in shown(window)  # no word in common: found by meaning
        assert "semantic" in window.search_bar.status_label.text()
        search(qtbot, window, "keyword", "vehicle breakdown")
        assert STALLED not in shown(window)
        search(qtbot, window, "hybrid", "vehicle failure")
        assert STALLED in shown(window)
        assert "hybrid" in window.search_bar.status_label.text()
        search(qtbot, window, "auto", "vehicle failure")
        assert STALLED in shown(window) and "hybrid" in window.search_bar.status_label.text()

        # A memory written later by another machine waits, and is embedded by the window.
        with SharedBrain.open(pg_address, actor="agent") as agent:
            agent.add("The truck broke down on the highway")
        qtbot.waitUntil(lambda: semantic.status_job is None, timeout=WAIT_MS)
        assert semantic.check_now() is not None  # (the window's check, every 30 s)
        with SharedBrain.open(pg_address, actor="check") as check:
            qtbot.waitUntil(lambda: check.embedding_info()["pending"] == 0, timeout=WAIT_MS)
        qtbot.waitUntil(lambda: not semantic.backfilling, timeout=WAIT_MS)  # its end heard
        wait_idle(qtbot, window)
    finally:
        window.close()


def test_without_ollama_a_search_by_meaning_says_why_and_answers_by_keyword(
    qtbot, tmp_path: Path, pg_address: str, ollama_server
) -> None:
    with SharedBrain.open(pg_address, actor="agent") as brain:
        for text in TEXTS:
            brain.add(text)
    ollama_server.stop()
    window = open_shared_window(qtbot, tmp_path, pg_address, **{URL_KEY: ollama_server.url})
    try:
        qtbot.waitUntil(lambda: window.semantic.light.status == "down", timeout=WAIT_MS)
        search(qtbot, window, "semantic", "automobile")
        assert shown(window) == [STALLED]  # by keyword
        assert "keyword" in window.search_bar.status_label.text()
        note = window.search_bar.meaning_note
        qtbot.waitUntil(note.isVisible, timeout=WAIT_MS)
        assert "Ollama does not answer" in note.text()
    finally:
        window.close()


def test_closing_never_waits_for_an_embedding_job_ollama_holds(
    qtbot, tmp_path: Path, pg_address: str, ollama_server
) -> None:
    """The window closes while Ollama holds the embedding job's batch; the job ends on its
    own afterwards, keeps that batch, and refreshes no view of the closed brain."""
    with SharedBrain.open(pg_address, actor="agent") as brain:
        for text in TEXTS:
            brain.add(text)
    ollama_server.hold_embeds()  # every embed call waits until released
    values = {URL_KEY: ollama_server.url, MODEL_KEY: "nomic-embed-text"}
    window = open_shared_window(qtbot, tmp_path, pg_address, **values)
    semantic = window.semantic
    qtbot.waitUntil(lambda: ollama_server.embed_count() >= 1, timeout=WAIT_MS)
    job = semantic.shared_backfill
    assert job is not None and not job.done
    window.close()  # returns while the call is held
    ollama_server.release_embeds()
    qtbot.waitUntil(lambda: semantic.shared_backfill is None, timeout=WAIT_MS)  # its end
    with SharedBrain.open(pg_address, actor="check") as check:
        assert check.embedding_info()["pending"] < len(TEXTS)  # the batch in hand was kept
