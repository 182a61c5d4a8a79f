"""The search field: plain words or FTS5 syntax, debounced, with its mode, count and errors.

Beside it a mode selector asks the core for auto, keyword, semantic, hybrid or cognitive
search; the label after it shows the mode that actually ran (auto becomes hybrid or keyword,
and a semantic search falls back to keyword while Ollama is down). A cognitive search says
under the field why the chosen result ranks where it does.

Search-as-you-type waits for a pause and for at least `MIN_QUERY_CHARS` characters (short
prefixes match most of a big brain and cost the most); Enter searches at once. A query the
core rejects shows the core's own message under the field, never a dialog.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from memgui.core.model import MAX_LIMIT
from memgui.ui.theme import colours
from memgui.ui.theme.icons import icon

DEBOUNCE_MS = 250
MIN_QUERY_CHARS = 2
MODES = (
    ("auto", "Auto", "Hybrid when memories have vectors and Ollama answers, else keyword"),
    ("keyword", "Keyword", "Full-text search: the words themselves (FTS5)"),
    ("semantic", "Semantic", "Nearest memories by meaning (embeddings from Ollama)"),
    ("hybrid", "Hybrid", "Keyword and meaning rankings fused, weighted by strength"),
    (
        "cognitive",
        "Cognitive",
        "AgentOS's composite score: meaning, strength, recency, mood, links and importance;"
        " each result says why",
    ),
)


class SearchBar(QWidget):
    """Emits `query_changed(str)` ('' means: no search, show the filtered list)."""

    query_changed = Signal(str)
    mode_changed = Signal(
        str
    )  # one of the core's modes: auto, keyword, semantic, hybrid, cognitive

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.field = QLineEdit()
        self.field.setObjectName("search_field")
        self.field.setPlaceholderText('Search memories (words or FTS5: "exact phrase", a OR b)')
        self.field.setAccessibleName("Search")
        self.field.setToolTip("Search content and tags (Ctrl+F). Enter searches at once.")
        self.field.setClearButtonEnabled(True)
        self.field.addAction(icon("search"), QLineEdit.ActionPosition.LeadingPosition)
        self.mode_box = QComboBox()
        self.mode_box.setObjectName("search_mode")
        self.mode_box.setAccessibleName("Search mode")
        self.mode_box.setToolTip("How to search: by words, by meaning, or both")
        for index, (mode, text, tip) in enumerate(MODES):
            self.mode_box.addItem(text, mode)
            self.mode_box.setItemData(index, tip, Qt.ItemDataRole.ToolTipRole)
        self.mode_box.currentIndexChanged.connect(
            lambda _index: self.mode_changed.emit(self.mode())
        )
        self.status_label = QLabel()
        self.status_label.setObjectName("search_status")
        self.status_label.setAccessibleName("Search result")
        self.error_label = QLabel()
        self.error_label.setObjectName("search_error")
        self.error_label.setAccessibleName("Search error")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {colours.ERROR};")
        self.error_label.hide()
        self.why_label = QLabel()
        self.why_label.setObjectName("search_why")
        self.why_label.setAccessibleName("Why this result")
        self.why_label.setWordWrap(True)
        self.why_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.why_label.hide()
        # Why a search by meaning answered by words only, and what to do (beside the results).
        self.meaning_note = QLabel()
        self.meaning_note.setObjectName("meaning_note")
        self.meaning_note.setAccessibleName("Search by meaning")
        self.meaning_note.setWordWrap(True)
        self.meaning_note.setTextFormat(Qt.TextFormat.RichText)
        self.meaning_note.setOpenExternalLinks(False)
        self.meaning_note.hide()

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.field, 1)
        row.addWidget(self.mode_box)
        row.addWidget(self.status_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.error_label)
        layout.addWidget(self.why_label)
        layout.addWidget(self.meaning_note)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self._emit_if_long_enough)
        self.field.textChanged.connect(self._on_text_changed)
        self.field.returnPressed.connect(self._emit_now)
        self._last_emitted = ""

    def query(self) -> str:
        return self.field.text().strip()

    def mode(self) -> str:
        """The mode asked for (the core's name)."""
        return str(self.mode_box.currentData())

    def set_mode(self, mode: str) -> None:
        index = self.mode_box.findData(mode)
        if index < 0:
            raise ValueError(f"mode must be one of {', '.join(m for m, _, _ in MODES)} ({mode!r})")
        self.mode_box.setCurrentIndex(index)

    def clear(self) -> None:
        """Empty the field without searching (another brain was opened)."""
        self._timer.stop()
        self.field.blockSignals(True)
        self.field.setText("")
        self.field.blockSignals(False)
        self._last_emitted = ""
        self.status_label.setText("")
        self.error_label.hide()

    def set_query(self, text: str) -> None:
        """Set the text and search at once (no debounce)."""
        self.field.setText(text)
        self._emit_now()

    def show_result(self, mode: str | None, count: int) -> None:
        """Show how the last query ran; `mode` None means no search is active."""
        self.error_label.hide()
        self.meaning_note.hide()
        if mode is None:
            self.status_label.setText("")
        else:
            noun = "result" if count == 1 else "results"
            # A search returns its best MAX_LIMIT hits: at the cap, more may match.
            capped = count >= MAX_LIMIT
            self.status_label.setText(f"{'best ' if capped else ''}{count} {noun} · {mode}")
            asked = self.mode()
            fell_back = asked not in ("auto", mode)
            self.status_label.setToolTip(
                f"Searched in {mode} mode"
                + (f" ({asked} needs embeddings and a reachable Ollama)" if fell_back else "")
                + (
                    f". A search shows its best {MAX_LIMIT} matches; more words or a filter"
                    " narrow it down"
                    if capped
                    else ""
                )
            )

    def show_why(self, why: str | None) -> None:
        """The chosen result's "why this result" line (a cognitive search), or none."""
        self.why_label.setVisible(bool(why))
        self.why_label.setText(f"Why this result: {why}" if why else "")

    def show_meaning_note(self, text: str) -> None:
        """Say why search by meaning did not run ('' hides it); `code` spans as code."""
        if not text:
            self.meaning_note.hide()
            return
        parts = html.escape(text).split("`")
        shown = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
        link = '<a href="settings">Search settings…</a>'
        self.meaning_note.setText(f"⚠ {shown} ({link})")
        self.meaning_note.show()

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
