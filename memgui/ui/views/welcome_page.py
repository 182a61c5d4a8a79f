"""The page an empty brain shows: what memgui is for and three ways to get memories."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from memgui.ui.theme.icons import icon


class WelcomePage(QWidget):
    import_requested = Signal()
    open_requested = Signal()
    sample_requested = Signal()
    new_memory_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome_page")
        title = QLabel("<h2>This brain has no memories yet</h2>")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.path_label = QLabel()
        self.path_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        text = QLabel(
            "memgui shows what AI agents remember: browse, search and fix their memories.\n"
            "Bring memories in from an export or another brain, open a brain file, or look\n"
            "around a small sample brain first (opened as a copy, the sample never changes)."
        )
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        text.setWordWrap(True)

        self.import_button = self._button("&Import…", "import", "Import memories from a file")
        self.open_button = self._button("&Open…", "open", "Open another brain file")
        self.sample_button = self._button(
            "Open &sample brain", "memgui", "Open a copy of the small sample brain"
        )
        self.new_button = self._button("&New memory", "new", "Write the first memory by hand")
        self.import_button.clicked.connect(self.import_requested)
        self.open_button.clicked.connect(self.open_requested)
        self.sample_button.clicked.connect(self.sample_requested)
        self.new_button.clicked.connect(self.new_memory_requested)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.import_button, self.open_button, self.sample_button, self.new_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(title)
        layout.addWidget(self.path_label)
        layout.addSpacing(8)
        layout.addWidget(text)
        layout.addSpacing(16)
        layout.addLayout(buttons)
        layout.addStretch(3)

    def set_brain_path(self, path: str) -> None:
        self.path_label.setText(f"<small>{path}</small>")

    @staticmethod
    def _button(text: str, icon_name: str, tip: str) -> QPushButton:
        button = QPushButton(icon(icon_name), text)
        button.setToolTip(tip)
        button.setAccessibleName(text.replace("&", "").rstrip("…"))
        button.setMinimumHeight(34)
        return button
