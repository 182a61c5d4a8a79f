"""Search by meaning in the app, against the real ollama client and a local test server."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt

from memgui.core.brain import Brain
from memgui.core.search.embed import OLLAMA_URL_ENV
from memgui.ui.dialogs.settings_dialog import MODEL_KEY, URL_KEY, SettingsDialog, ollama_config
from memgui.ui.main_window import MainWindow
from memgui.ui.models.trace_columns import COLUMNS, EMBEDDING_COLUMN
from memgui.ui.semantic.ollama_status import describe
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, wait_idle

STALLED = "My automobile stalled this morning"
MECHANIC = "The mechanic fixed the car engine"
TEXTS = (STALLED, MECHANIC, "Alice prefers dark mode", "The cache key includes the locale")


@pytest.fixture(autouse=True)
def _no_url_from_env(monkeypatch):
    monkeypatch.delenv(OLLAMA_URL_ENV, raising=False)


@pytest.fixture
def semantic_brain(tmp_path):
    path = tmp_path / "semantic.sqlite"
    with Brain.open(path, actor="test") as brain:
        ids = {text: brain.add(text).id for text in TEXTS}
    return path, ids


def open_semantic_window(qtbot, tmp_path, path, url: str, model: str = "") -> MainWindow:
    return open_window(qtbot, tmp_path, path, **{URL_KEY: url, MODEL_KEY: model})


def wait_status(qtbot, window: MainWindow, status: str) -> None:
    qtbot.waitUntil(lambda: window.semantic.light.status == status, timeout=WAIT_MS)


def wait_backfilled(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(
        lambda: window.semantic.pending == 0 and not window.semantic.backfilling,
        timeout=WAIT_MS,
    )
    wait_idle(qtbot, window)


def shown_contents(window: MainWindow) -> list[str]:
    return [window.model.index(r, 0).data() for r in range(window.model.rowCount())]


def embedding_cells(window: MainWindow) -> set[str]:
    return {window.model.index(r, EMBEDDING_COLUMN).data() for r in range(window.model.rowCount())}


def search(qtbot, window: MainWindow, mode: str, text: str) -> None:
    window.search_bar.set_mode(mode)
    window.search_bar.set_query(text)
    wait_idle(qtbot, window)


def test_semantic_mode_finds_a_paraphrase_keyword_mode_does_not(
    qtbot, tmp_path, semantic_brain, ollama_server
):
    path, _ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    wait_status(qtbot, window, "reachable")
    wait_backfilled(qtbot, window)
    assert embedding_cells(window) == {"embedded"}
    assert COLUMNS[EMBEDDING_COLUMN].header == "Embedding"

    search(qtbot, window, "semantic", "vehicle breakdown")
    assert STALLED in shown_contents(window)  # no shared word: found by meaning
    assert "semantic" in window.search_bar.status_label.text()

    search(qtbot, window, "keyword", "vehicle breakdown")
    assert STALLED not in shown_contents(window)
    assert "keyword" in window.search_bar.status_label.text()

    search(qtbot, window, "auto", "vehicle failure")
    assert STALLED in shown_contents(window)
    assert "hybrid" in window.search_bar.status_label.text()
    window.close()


def test_light_follows_the_server_and_search_falls_back_to_keyword(
    qtbot, tmp_path, semantic_brain, ollama_server
):
    path, _ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    wait_status(qtbot, window, "reachable")
    wait_backfilled(qtbot, window)
    assert window.semantic.light.label.text() == "Ollama"

    ollama_server.stop()
    window.semantic.check_now()
    wait_status(qtbot, window, "down")
    assert "down" in window.semantic.light.label.text()

    # Asked for meaning while Ollama is down: the keyword search runs and says so.
    search(qtbot, window, "semantic", "automobile")
    assert shown_contents(window) == [STALLED]
    assert "keyword" in window.search_bar.status_label.text()
    window.close()


def test_light_says_model_missing(qtbot, tmp_path, semantic_brain, ollama_server):
    path, _ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url, "no-such-model")
    wait_status(qtbot, window, "model missing")
    assert window.semantic.light.label.text().startswith("Ollama: model missing")
    assert not window.semantic.backfilling
    window.close()


def test_backfill_embeds_pending_traces_when_the_server_returns(
    qtbot, tmp_path, semantic_brain, ollama_server
):
    path, _ids = semantic_brain
    ollama_server.stop()
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    wait_status(qtbot, window, "down")
    assert window.semantic.pending == len(TEXTS)
    assert "4 memories to embed" in window.semantic.light.label.text()
    assert embedding_cells(window) == {"pending"}

    ollama_server.start()
    window.semantic.check_now()
    wait_status(qtbot, window, "reachable")
    wait_backfilled(qtbot, window)
    qtbot.waitUntil(lambda: embedding_cells(window) == {"embedded"}, timeout=WAIT_MS)
    assert ollama_server.embed_count() >= 1
    with Brain.open(path, actor="test") as brain:
        assert brain.embedding_info()["pending"] == 0
    window.close()


def test_closing_never_waits_for_a_backfill_that_ollama_holds(
    qtbot, tmp_path, semantic_brain, ollama_server
):
    path, _ids = semantic_brain
    ollama_server.hold_embeds()  # every embed call waits until released
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    upkeep = window.semantic.upkeep
    assert upkeep is not None and upkeep.running
    # The first round, at start: its embed call is under way, held by Ollama.
    qtbot.waitUntil(lambda: ollama_server.embed_count() >= 1, timeout=WAIT_MS)
    window.close()  # returns while the call is held: nothing waits for the upkeep
    assert window.semantic.upkeep is None and upkeep.running
    ollama_server.release_embeds()
    qtbot.waitUntil(lambda: not upkeep.running, timeout=WAIT_MS)  # it ends on its own
    with Brain.open(path, actor="test") as brain:
        assert brain.embedding_info()["pending"] < len(TEXTS)  # the batch in hand was kept


def test_similar_tab_lists_neighbours_and_opens_one(qtbot, tmp_path, semantic_brain, ollama_server):
    path, ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    wait_backfilled(qtbot, window)
    assert window.select_id(ids[STALLED])
    tab = window.detail.similar
    with qtbot.waitSignal(tab.loaded, timeout=WAIT_MS):
        window.detail.setCurrentWidget(tab)
    found = [trace.content for trace, _score in tab.model.items()]
    assert found[0] == MECHANIC and STALLED not in found
    index = tab.model.index(0, 0)
    tab.view.doubleClicked.emit(index)
    assert window.current_id() == ids[MECHANIC]
    window.close()


def test_similar_tab_explains_a_memory_without_a_vector(qtbot, tmp_path, semantic_brain):
    path, ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, "http://127.0.0.1:9")
    assert window.select_id(ids[STALLED])
    tab = window.detail.similar
    with qtbot.waitSignal(tab.loaded, timeout=WAIT_MS):
        window.detail.setCurrentWidget(tab)
    assert tab.model.rowCount() == 0
    assert "no vector yet" in tab.message.text() and tab.message.isVisibleTo(tab)
    window.close()


def test_settings_dialog_and_environment(qtbot, tmp_path, monkeypatch):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert ollama_config(settings) == ("http://localhost:11434", "nomic-embed-text")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.url.setText("http://10.0.0.5:11434/")
    dialog.model.setText("all-minilm")
    dialog.accept()
    assert ollama_config(settings) == ("http://10.0.0.5:11434", "all-minilm")
    monkeypatch.setenv(OLLAMA_URL_ENV, "http://envhost:1234")
    assert ollama_config(settings)[0] == "http://envhost:1234"
    with_env = SettingsDialog(settings)
    qtbot.addWidget(with_env)
    assert not with_env.note.isHidden()


def test_mode_selector_rejects_an_unknown_mode(qtbot):
    from memgui.ui.views.search_bar import SearchBar

    bar = SearchBar()
    qtbot.addWidget(bar)
    assert bar.mode() == "auto"
    with qtbot.waitSignal(bar.mode_changed, timeout=WAIT_MS) as changed:
        bar.set_mode("hybrid")
    assert changed.args == ["hybrid"]
    with pytest.raises(ValueError, match="mode must be one of .*'fuzzy'"):
        bar.set_mode("fuzzy")
    assert bar.mode() == "hybrid"
    assert describe("down", 1) == "Ollama down · 1 memory to embed"
    tips = [bar.mode_box.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(4)]
    assert all(tips)  # each mode says what it does


def test_a_memory_saved_in_the_app_is_embedded_soon_after(
    qtbot, tmp_path, semantic_brain, ollama_server
):
    path, _ids = semantic_brain
    window = open_semantic_window(qtbot, tmp_path, path, ollama_server.url)
    wait_backfilled(qtbot, window)
    added = window.session.brain.add("The puppy ate its dinner")
    assert window.session.brain.get(added.id).embedding_status == 0  # saving never waits
    qtbot.waitUntil(
        lambda: window.session.brain.get(added.id).embedding_status == 1, timeout=WAIT_MS
    )
    wait_backfilled(qtbot, window)
    window.close()
