"""Search settings: the Ollama URL and the embedding model, kept in QSettings.

`$MEMGUI_OLLAMA_URL` wins over the stored URL (as for the CLI), so the dialog says so when
it is set.
"""

from __future__ import annotations

import os
from collections.abc import Generator

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from memgui.core.llm import OllamaChat, resolve_chat_model
from memgui.core.progress import Progress
from memgui.core.search.embed import (
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_OLLAMA_URL,
    OLLAMA_URL_ENV,
    EmbedderStatus,
    OllamaEmbedder,
    resolve_ollama_url,
)
from memgui.ui.jobs import JobRunner

URL_KEY = "ollama/url"
MODEL_KEY = "ollama/model"
CHAT_MODEL_KEY = "ollama/chat_model"  # consolidation's insights, an import's facts


def stored_url(settings: QSettings) -> str:
    value = settings.value(URL_KEY, "")
    return value if isinstance(value, str) else ""


def ollama_config(settings: QSettings) -> tuple[str, str]:
    """(url, model) the app uses: `$MEMGUI_OLLAMA_URL`, else the settings, else defaults."""
    model = settings.value(MODEL_KEY, "")
    model = model.strip() if isinstance(model, str) else ""
    return resolve_ollama_url(None, stored_url(settings)), model or DEFAULT_EMBEDDING_MODEL


def chat_model_of(settings: QSettings) -> OllamaChat:
    """The chat model the app asks: the app's Ollama, the model last chosen (else the
    default, `$MEMGUI_CHAT_MODEL` first)."""
    stored = settings.value(CHAT_MODEL_KEY, "")
    model = resolve_chat_model(stored if isinstance(stored, str) else None)
    return OllamaChat(ollama_config(settings)[0], model)


def _connection_job(url: str, model: str) -> Generator[Progress, None, EmbedderStatus]:
    yield Progress(0, None, f"asking Ollama at {url}")
    return OllamaEmbedder(url, model).status()


def connection_verdict(status: str, url: str, model: str) -> str:
    """What a connection test found, and what to do about it."""
    if status == "reachable":
        return f"✓ Ollama answers at {url} and has the model {model}."
    if status == "model missing":
        return f"Ollama answers at {url} but has no model {model}: run `ollama pull {model}`."
    return f"Ollama does not answer at {url}: start it with `ollama serve`, or check the URL."


class SettingsDialog(QDialog):
    def __init__(
        self, settings: QSettings, parent: QWidget | None = None, runner: JobRunner | None = None
    ) -> None:
        super().__init__(parent)
        self.runner = runner  # asks Ollama off the GUI thread (a hung server must not freeze)
        self.setWindowTitle("Search settings")
        self.settings = settings
        self.url = QLineEdit(stored_url(settings))
        self.url.setPlaceholderText(DEFAULT_OLLAMA_URL)
        self.url.setAccessibleName("Ollama URL")
        self.url.setToolTip("Where Ollama listens; empty means the default")
        model = settings.value(MODEL_KEY, "")
        self.model = QLineEdit(model if isinstance(model, str) else "")
        self.model.setPlaceholderText(DEFAULT_EMBEDDING_MODEL)
        self.model.setAccessibleName("Embedding model")
        self.model.setToolTip(
            "The Ollama model that embeds memories. A brain keeps the model it was embedded "
            "with; another model needs `memgui embed --rebuild --model M`."
        )
        form = QFormLayout()
        form.addRow("Ollama &URL", self.url)
        form.addRow("Embedding &model", self.model)
        self.note = QLabel()
        self.note.setWordWrap(True)
        env = os.environ.get(OLLAMA_URL_ENV, "").strip()
        if env:
            self.note.setText(f"${OLLAMA_URL_ENV} is set ({env}) and is used instead of the URL.")
        self.note.setVisible(bool(env))
        self.test_button = QPushButton("&Test connection")
        self.test_button.setToolTip("Ask Ollama at this URL whether it answers and has the model")
        self.test_button.clicked.connect(self.test_connection)
        self.test_button.setEnabled(runner is not None)
        self.test_result = QLabel()
        self.test_result.setObjectName("connection_result")
        self.test_result.setWordWrap(True)
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.addButton(self.test_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.note)
        layout.addWidget(self.test_result)
        layout.addWidget(buttons)

    def chosen(self) -> tuple[str, str]:
        """(url, model) as typed now, defaults and `$MEMGUI_OLLAMA_URL` applied."""
        url = resolve_ollama_url(None, self.url.text().strip().rstrip("/"))
        return url, self.model.text().strip() or DEFAULT_EMBEDDING_MODEL

    def test_connection(self) -> None:
        if self.runner is None:
            return
        url, model = self.chosen()
        self.test_button.setEnabled(False)
        self.test_result.setText(f"Asking Ollama at {url}…")
        job = self.runner.start("ollama test", lambda: _connection_job(url, model))
        job.finished.connect(lambda status: self._tested(connection_verdict(status, url, model)))
        job.failed.connect(lambda exc: self._tested(f"The test failed: {exc}"))

    def _tested(self, verdict: str) -> None:
        self.test_result.setText(verdict)
        self.test_button.setEnabled(True)

    def accept(self) -> None:
        self.save()
        super().accept()

    def save(self) -> None:
        self.settings.setValue(URL_KEY, self.url.text().strip().rstrip("/"))
        self.settings.setValue(MODEL_KEY, self.model.text().strip())
        self.settings.sync()
