"""The Ollama light in the status bar: reachable / model missing / down, and the backlog.

A view only: `SemanticService` (backfill.py) asks Ollama off the GUI thread and calls
`show_status`. The colour is never the only signal: the text says the same.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from memgui.ui.theme import colours

COLOURS = colours.OLLAMA
TEXTS = {
    "reachable": "Ollama",
    "model missing": "Ollama: model missing",
    "down": "Ollama down",
    "checking": "Ollama…",
    "off": "",
}


def describe(status: str, pending: int | None) -> str:
    """The light's text: the state, then how many memories wait for a vector."""
    text = TEXTS.get(status, status)
    if pending:
        noun = "memory" if pending == 1 else "memories"
        text += f" · {pending} {noun} to embed"
    return text


class OllamaStatusLight(QWidget):
    """A coloured dot and a short text; a click asks for the search settings."""

    clicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ollama_status")
        self.setAccessibleName("Ollama status")
        self.dot = QLabel("●")
        self.dot.setObjectName("ollama_dot")
        self.label = QLabel()
        self.label.setObjectName("ollama_text")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(self.dot)
        layout.addWidget(self.label)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.status = "off"
        self.pending: int | None = None
        self.show_status("off", None)

    def show_status(self, status: str, pending: int | None, detail: str = "") -> None:
        """Show `status` (reachable, model missing, down, checking, off) and the backlog."""
        self.status, self.pending = status, pending
        self.dot.setStyleSheet(f"color: {COLOURS.get(status, COLOURS['off'])};")
        self.label.setText(describe(status, pending))
        self.setVisible(status != "off")
        tip = detail or "Search by meaning uses a local Ollama for embeddings."
        self.setToolTip(f"{tip}\nClick to change the Ollama URL or model.")
        self.setAccessibleDescription(self.label.text())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mouseReleaseEvent(event)
