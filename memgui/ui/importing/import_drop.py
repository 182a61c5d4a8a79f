"""Dropping files or folders on the main window to import them.

`check_drop` decides what a drag carries: one local file or folder whose format memgui
reads (the same detection the core's `format="auto"` uses), or the reason it cannot be
imported (several items, a web address, an image, no brain open). While the drag is over the
window `DropOverlay` says which; an unsupported drag shows the "no" cursor and the reason
stays in the status bar after the drag leaves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QMimeData, QObject, Qt
from PySide6.QtGui import QColor, QDropEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from memgui.core.errors import MemguiError
from memgui.core.io import detect_format
from memgui.ui.theme import colours

COPY = Qt.DropAction.CopyAction
ONLY_MOVE = "This drag can only move what it carries: drop a copy (memgui only reads it)"
if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow


@dataclass(frozen=True)
class DropCheck:
    path: Path | None
    format: str | None
    message: str

    @property
    def ok(self) -> bool:
        return self.path is not None


def check_drop(mime: QMimeData, brain_open: bool, read_only: bool = False) -> DropCheck:
    """What dropping `mime` would import, or why it would not."""
    if not mime.hasUrls():
        return DropCheck(None, None, "Only files and folders can be imported")
    urls = mime.urls()
    if len(urls) != 1:
        return DropCheck(
            None, None, f"Drop one file or folder at a time ({len(urls)} items are dragged)"
        )
    url = urls[0]
    if not url.isLocalFile():
        return DropCheck(None, None, f"{url.toString()} is not a file on this computer")
    path = Path(url.toLocalFile())
    if not brain_open:
        return DropCheck(None, None, "Open or create a brain first; imports go into it")
    if read_only:
        return DropCheck(None, None, "This brain's file is read-only: nothing can be imported")
    if not path.exists():
        return DropCheck(None, None, f"{path.name} does not exist")
    try:
        fmt = detect_format(path)
    except MemguiError as exc:
        reason = (getattr(exc, "problem", None) or str(exc)).split("; name one of")[0]
        return DropCheck(None, None, f"Cannot import {path.name}: {reason}")
    what = "folder" if path.is_dir() else "file"
    # Here, not at the top: the review's module loads the import engine, which the window
    # needs only once something is imported.
    from memgui.ui.importing.import_review_parts import FORMAT_LABELS

    label = FORMAT_LABELS.get(fmt, fmt)
    return DropCheck(path, fmt, f"Drop to import the {what} {path.name} ({label})")


class DropOverlay(QWidget):
    """A translucent panel over the window saying what a drop would do."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("drop_overlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.check: DropCheck | None = None
        self.hide()

    def show_check(self, check: DropCheck) -> None:
        self.check = check
        parent = self.parentWidget()
        if parent is not None:
            # Over the window's content, below the menus and the toolbar it must not cross.
            central = getattr(parent, "centralWidget", lambda: None)()
            self.setGeometry(central.geometry() if central is not None else parent.rect())
        self.raise_()
        self.show()
        self.update()

    @property
    def text(self) -> str:
        return self.check.message if self.check else ""

    def paintEvent(self, _event: QPaintEvent) -> None:
        if self.check is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = QColor(colours.DROP_OK if self.check.ok else colours.REFUSED)
        fill = QColor(accent)
        fill.setAlpha(40)
        painter.fillRect(self.rect(), fill)
        panel = self.rect().adjusted(40, 40, -40, -40)
        pen = painter.pen()
        pen.setColor(accent)
        pen.setWidth(3)
        pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.drawRoundedRect(panel, 16, 16)
        font = painter.font()
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        painter.setFont(font)
        # The message on a card of its own, so the page beneath never shows through it.
        flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
        room = panel.adjusted(24, 24, -24, -24)
        text_box = painter.boundingRect(room, int(flags), self.text)
        card = text_box.adjusted(-24, -16, 24, 16)
        painter.setBrush(self.palette().color(self.backgroundRole()))
        painter.setPen(accent)
        painter.drawRoundedRect(card, 10, 10)
        painter.drawText(text_box, int(flags), self.text)


class DropFilter(QObject):
    """Event filter for the window and its drop-accepting children: file drags are ours."""

    DRAG_EVENTS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)

    def __init__(self, window: MainWindow, on_drop: Callable[[Path], object]) -> None:
        super().__init__(window)
        self.window = window
        self.on_drop = on_drop  # called with the path to import
        self.overlay = DropOverlay(window)
        self.check: DropCheck | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.DragLeave:
            if self.check is not None:
                self._leave()
            return False
        if kind not in self.DRAG_EVENTS or not isinstance(event, QDropEvent):
            return False
        mime = event.mimeData()
        if not mime.hasUrls():
            return False  # text dragged into an editor is the editor's business
        if kind == QEvent.Type.DragEnter or self.check is None:
            session = self.window.session
            read_only = session is not None and session.read_only
            self.check = check_drop(mime, session is not None, read_only)
            if self.check.ok and not event.possibleActions() & COPY:
                self.check = DropCheck(None, None, ONLY_MOVE)
            self.overlay.show_check(self.check)
        if kind == QEvent.Type.Drop:
            self._dropped(event)
            return True
        if self.check.ok:
            _accept_as_copy(event)
        elif kind == QEvent.Type.DragEnter:
            event.accept()  # keep receiving the drag so the overlay can say why not
        else:
            event.ignore()  # the "no" cursor; nothing happens on release
        return True

    def _leave(self) -> None:
        check, self.check = self.check, None
        self.overlay.hide()
        if check is not None and not check.ok:
            self.window.show_error(check.message)

    def _dropped(self, event: QDropEvent) -> None:
        check, self.check = self.check, None
        self.overlay.hide()
        if check is None or not check.ok or check.path is None:
            event.ignore()
            self.window.show_error(check.message if check else "Nothing to import")
            return
        _accept_as_copy(event)
        self.on_drop(check.path)


def _accept_as_copy(event: QDropEvent) -> None:
    """Take the drag as a copy whatever it proposes: a file manager told "moved" may move
    or delete what was dropped, and an import only reads it."""
    event.setDropAction(COPY)
    event.accept()
