"""The page an empty brain shows: what memgui is for and three ways to get memories."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMenu, QPushButton, QVBoxLayout, QWidget

from memgui.ui.theme.icons import icon


class WelcomePage(QWidget):
    import_requested = Signal()  # a file
    import_folder_requested = Signal()  # a folder: a vault, a Markdown folder, a split export
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

        self.import_button = self._button(
            "&Import…", "import", "Import memories from a file or a folder"
        )
        # A file or a folder: one dialog cannot ask for either, so the button asks which.
        choices = QMenu(self.import_button)
        choices.addAction("A &file… (ChatGPT export, JSON, JSONL, CSV, brain)").triggered.connect(
            self.import_requested
        )
        choices.addAction("A f&older… (Obsidian vault, Markdown notes)").triggered.connect(
            self.import_folder_requested
        )
        self.import_button.setMenu(choices)
        self.open_button = self._button("&Open…", "open", "Open another brain file")
        self.sample_button = self._button(
            "Open &sample brain", "memgui", "Open a copy of the small sample brain"
        )
        self.new_button = self._button("&New memory", "new", "Write the first memory by hand")
        self.open_button.clicked.connect(self.open_requested)
        self.sample_button.clicked.connect(self.sample_requested)
        self.new_button.clicked.connect(self.new_memory_requested)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.import_button, self.open_button, self.sample_button, self.new_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        drop_hint = QLabel(
            "Or drop a file or a folder — an Obsidian vault, a ChatGPT export — anywhere on "
            "this window."
        )
        drop_hint.setObjectName("drop_hint")
        drop_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        drop_hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(title)
        layout.addWidget(self.path_label)
        layout.addSpacing(8)
        layout.addWidget(text)
        layout.addSpacing(16)
        layout.addLayout(buttons)
        layout.addSpacing(8)
        layout.addWidget(drop_hint)
        layout.addStretch(3)

    def set_brain_path(self, path: str) -> None:
        self.path_label.setText(f"<small>{html.escape(path)}</small>")

    @staticmethod
    def _button(text: str, icon_name: str, tip: str) -> QPushButton:
        button = QPushButton(icon(icon_name), text)
        button.setToolTip(tip)
        button.setAccessibleName(text.replace("&", "").rstrip("…"))
        button.setMinimumHeight(34)
        return button
