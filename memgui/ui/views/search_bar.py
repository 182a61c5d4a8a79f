"""The search field: plain words or FTS5 syntax, debounced, with its mode, count and errors.

Search-as-you-type waits for a pause and for at least `MIN_QUERY_CHARS` characters (short
prefixes match most of a big brain and cost the most); Enter searches at once. A query the
core rejects shows the core's own message under the field, never a dialog.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from memgui.ui.icons import icon

DEBOUNCE_MS = 250
MIN_QUERY_CHARS = 2


class SearchBar(QWidget):
    """Emits `query_changed(str)` ('' means: no search, show the filtered list)."""

    query_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = QLineEdit()
        self.field.setObjectName("search_field")
        self.field.setPlaceholderText('Search memories (words or FTS5: "exact phrase", a OR b)')
        self.field.setAccessibleName("Search")
        self.field.setToolTip("Search content and tags (Ctrl+F). Enter searches at once.")
        self.field.setClearButtonEnabled(True)
        self.field.addAction(icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.status_label = QLabel()
        self.status_label.setObjectName("search_status")
        self.status_label.setAccessibleName("Search result")
        self.error_label = QLabel()
        self.error_label.setObjectName("search_error")
        self.error_label.setAccessibleName("Search error")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.hide()

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.status_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.error_label)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._emit_if_long_enough)
        self.field.textChanged.connect(self._on_text_changed)
        self.field.returnPressed.connect(self._emit_now)
        self._last_emitted = ""

    def query(self) -> str:
        return self.field.text().strip()

    def set_query(self, text: str) -> None:
        """Set the text and search at once (no debounce)."""
        self.field.setText(text)
        self._emit_now()

    def show_result(self, mode: str | None, count: int) -> None:
        """Show how the last query ran; `mode` None means no search is active."""
        self.error_label.hide()
        if mode is None:
            self.status_label.setText("")
        else:
            noun = "result" if count == 1 else "results"
            self.status_label.setText(f"{count} {noun} · {mode}")

    def show_error(self, message: str) -> None:
        self.status_label.setText("")
        self.error_label.setText(message)
        self.error_label.show()

    def _on_text_changed(self, _text: str) -> None:
        self._timer.start()

    def _emit_if_long_enough(self) -> None:
        text = self.query()
        if text and len(text) < MIN_QUERY_CHARS:
            return
        self._emit(text)

    def _emit_now(self) -> None:
        self._timer.stop()
        self._emit(self.query(), force=True)

    def _emit(self, text: str, force: bool = False) -> None:
        if text == self._last_emitted and not force:
            return
        self._last_emitted = text
        self.query_changed.emit(text)
