"""Where the table stands: "12 of 340 memories" in the status bar, and, over an empty
result, why it is empty ("Nothing matches type episodic, tag ops") with a way out.

The counts come from the window's counts job (`MainWindow.update_counts`); the shown rows
from the table model. Nothing here reads the brain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QWidget

from memgui.core.model import TraceFilter

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

CLEAR_LINK = "clear"


def describe_filter(flt: TraceFilter, search: str) -> list[str]:
    """The narrowing parts of a view, as a person reads them."""
    parts = [f"the search “{search}”"] if search else []
    for label, value in (
        ("type", flt.type),
        ("scope", flt.scope),
        ("category", flt.category),
        ("scope id", flt.scope_id),
        ("tag", flt.tag),
    ):
        if value:
            parts.append(f"{label} {value}")
    return parts


def counts_text(shown: int, info: dict[str, Any] | None, narrowed: bool, trash: bool) -> str:
    """The status bar's counts: "340 memories · 5 in trash", "12 of 340 memories · …"."""
    if info is None:
        return ""
    live, deleted = info["live"], info["deleted"]
    if trash:
        of = f"{shown} of {deleted} in the trash" if narrowed else f"{deleted} in the trash"
        return f"{of} · {live} memories"
    noun = "memory" if live == 1 else "memories"
    of = f"{shown} of {live} {noun}" if narrowed else f"{live} {noun}"
    return f"{of} · {deleted} in trash"


class EmptyResultNote(QLabel):
    """Over the table's empty viewport: why nothing shows, and a link that clears it."""

    def __init__(self, viewport: QWidget) -> None:
        super().__init__(viewport)
        self.setObjectName("empty_result_note")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.setAccessibleName("Why the list is empty")
        self.hide()
        viewport.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.parentWidget():
            self._place()
        return False

    def say(self, parts: list[str], trash: bool) -> None:
        where = "in the trash" if trash else ""
        if parts:
            what = ", ".join(parts)
            text = (
                f"Nothing {where + ' ' if where else ''}matches {what}.<br>"
                f'<a href="{CLEAR_LINK}">Clear the search and filters</a> (Esc in the filter bar)'
            )
        else:
            text = "The trash is empty." if trash else "No memories here."
        self.setText(text)
        self._place()
        self.show()

    def _place(self) -> None:
        viewport = self.parentWidget()
        if viewport is not None:
            self.setGeometry(viewport.rect().adjusted(24, 24, -24, -24))


class ViewSummary(QObject):
    """Keeps the counts label and the empty-result note in step with the table."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.info: dict[str, Any] | None = None
        self.note = EmptyResultNote(window.table.viewport())
        self.note.linkActivated.connect(lambda _link: window.clear_search_and_filters())

    def set_info(self, info: dict[str, Any] | None) -> None:
        self.info = info
        self.update()

    def update(self) -> None:
        window = self.window
        model = window.model
        if window.session is None or model is None:
            window.counts_label.setText("")
            self.note.hide()
            return
        flt = window.filter_bar.current_filter()
        search = window.search_bar.query()
        parts = describe_filter(flt, search)
        shown = model.rowCount()
        window.counts_label.setText(counts_text(shown, self.info, bool(parts), flt.deleted))
        if shown == 0 and not model.busy:
            self.note.say(parts, flt.deleted)
        else:
            self.note.hide()
