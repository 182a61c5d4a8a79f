"""The import window's job page: what the running plan or commit does, how far it got, Cancel.

When a plan stops with nothing planned yet (the format could not be detected, or the file
is not what its name says) the page offers a format to read the source as, and *Plan
again* re-plans with it: the review page, which has the format box, is never reached then.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from memgui.core.io import IMPORT_FORMATS
from memgui.core.progress import Progress
from memgui.ui.importing.import_review_parts import FORMAT_LABELS

SHOW_EVERY_MS = 50


class WorkingPage(QWidget):
    """A running plan or commit: what it does now, how far it got, and Cancel."""

    format_chosen = Signal(str)  # a format to plan the source again as

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setObjectName("working_title")
        self.message = QLabel()
        self.message.setObjectName("working_message")
        self.message.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setObjectName("working_bar")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setObjectName("cancel_button")
        self.back_button = QPushButton("Back to the review")
        self.back_button.setObjectName("back_button")
        self.format_box = QComboBox()
        self.format_box.setObjectName("working_format_box")
        for name in IMPORT_FORMATS:
            self.format_box.addItem(FORMAT_LABELS.get(name, name), name)
        self.format_box.setPlaceholderText("choose a format")
        self.format_box.setCurrentIndex(-1)
        self.plan_button = QPushButton("&Plan again")
        self.plan_button.setObjectName("plan_again_button")
        self.plan_button.setEnabled(False)
        self.format_box.currentIndexChanged.connect(
            lambda index: self.plan_button.setEnabled(index >= 0)
        )
        self.plan_button.clicked.connect(
            lambda: self.format_chosen.emit(str(self.format_box.currentData()))
        )
        format_label = QLabel("&Read it as")
        format_label.setBuddy(self.format_box)
        self.format_row = QWidget()
        chooser = QHBoxLayout(self.format_row)
        chooser.setContentsMargins(0, 0, 0, 0)
        chooser.addWidget(format_label)
        chooser.addWidget(self.format_box)
        chooser.addWidget(self.plan_button)
        chooser.addStretch(1)
        self.format_row.hide()
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.back_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.title)
        layout.addWidget(self.bar)
        layout.addWidget(self.message)
        layout.addWidget(self.format_row)
        layout.addLayout(row)
        layout.addStretch(2)

        # A reader reports every file; the page shows the latest report at most every
        # SHOW_EVERY_MS, so a fast job does not keep the GUI thread busy repainting.
        self._latest: Progress | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(SHOW_EVERY_MS)
        self._timer.timeout.connect(self._show_latest)

    def start(self, title: str) -> None:
        self._latest = None
        self._timer.start()
        self.title.setText(f"<b>{title}</b>")
        self.message.setText("")
        self.bar.setRange(0, 0)  # busy until the first progress with a total
        self.cancel_button.setText("Cancel")
        self.cancel_button.setEnabled(True)
        self.back_button.hide()
        self.format_row.hide()

    def show_progress(self, event: Progress) -> None:
        self._latest = event

    def _show_latest(self) -> None:
        event, self._latest = self._latest, None
        if event is None:
            return
        if event.total:
            self.bar.setRange(0, event.total)
            self.bar.setValue(min(event.done, event.total))
        else:
            self.bar.setRange(0, 0)
        if event.message:
            self.message.setText(event.message)

    def hideEvent(self, event: QHideEvent) -> None:
        self._timer.stop()  # the job ended and another page shows
        super().hideEvent(event)

    def stopped(self, text: str, can_go_back: bool, choose_format: str | None = None) -> None:
        """Show why the job stopped; with `choose_format` (the format tried, or "auto"),
        offer another format to plan the source as."""
        self._timer.stop()
        self._latest = None
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.message.setText(text)
        self.cancel_button.setText("Close")
        self.back_button.setVisible(can_go_back)
        self.format_row.setVisible(choose_format is not None)
        if choose_format is not None:
            self.format_box.setCurrentIndex(self.format_box.findData(choose_format))
            self.format_box.setFocus()
