"""Tags as chips: one small button per tag (click, Space or Delete removes it) in a flow
layout, plus a field that adds a tag on Enter or comma (Backspace on empty removes the last).

Tags keep their order and are exact and case-sensitive, as the core stores them.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit, QSizePolicy, QToolButton, QWidget

from memgui.ui.views.flow_layout import FlowLayout
from memgui.ui.views.undo_keys import is_redo, is_undo

CHIP_STYLE = """
QToolButton { border: 1px solid palette(mid); border-radius: 10px; padding: 1px 8px;
              background: palette(alternate-base); }
QToolButton:hover, QToolButton:focus { border-color: palette(highlight); }
"""


class TagEditor(QWidget):
    tags_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tag_editor")
        self.setAccessibleName("Tags")
        self.setStyleSheet(CHIP_STYLE)
        self._chips: list[QToolButton] = []
        self.field = QLineEdit()
        self.field.setObjectName("tag_field")
        self.field.setPlaceholderText("add tag…")
        self.field.setAccessibleName("Add tag")
        self.field.setToolTip("Type a tag and press Enter or comma to add it")
        self.field.setFixedWidth(110)
        self._flow = FlowLayout(self)
        self._flow.addWidget(self.field)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.field.returnPressed.connect(self._add_from_field)
        self.field.textEdited.connect(self._on_text_edited)
        self.field.installEventFilter(self)

    def tags(self) -> list[str]:
        return [chip.property("tag") for chip in self._chips]

    def set_tags(self, tags: list[str] | tuple[str, ...]) -> None:
        for chip in self._chips:
            self._flow.removeWidget(chip)
            chip.deleteLater()
        self._chips = []
        for tag in tags:
            self._append_chip(tag)
        self.field.clear()

    def add_tag(self, tag: str) -> bool:
        tag = tag.strip()
        if not tag or tag in self.tags():
            return False
        self._append_chip(tag)
        self.tags_changed.emit(self.tags())
        return True

    def remove_tag(self, tag: str) -> bool:
        for chip in self._chips:
            if chip.property("tag") == tag:
                self._chips.remove(chip)
                self._flow.removeWidget(chip)
                chip.deleteLater()
                self.updateGeometry()
                self.tags_changed.emit(self.tags())
                self.field.setFocus()
                return True
        return False

    def _append_chip(self, tag: str) -> None:
        chip = QToolButton(self)
        chip.setText(f"{tag}  ×")
        chip.setProperty("tag", tag)
        chip.setAccessibleName(f"Tag {tag}")
        chip.setToolTip(f"Remove the tag “{tag}” (click, Space or Delete)")
        chip.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        chip.clicked.connect(lambda _checked=False, t=tag: self.remove_tag(t))
        chip.installEventFilter(self)
        # Chips go before the field, which always comes last.
        self._flow.takeAt(self._flow.count() - 1)
        self._flow.addWidget(chip)
        self._flow.addWidget(self.field)
        self._chips.append(chip)
        # Tab reaches the chips in order, just before the field (a new widget would
        # otherwise come last in the window's focus chain).
        QWidget.setTabOrder(self.field, chip)
        QWidget.setTabOrder(chip, self.field)
        chip.show()
        self.updateGeometry()

    def _add_from_field(self) -> None:
        for part in self.field.text().split(","):
            self.add_tag(part)
        self.field.setText("")  # and its undo history: the text became chips

    def _on_text_edited(self, text: str) -> None:
        if "," in text:
            self._add_from_field()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.field
            and event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and not self.field.text()
            and (is_undo(event) or is_redo(event))
        ):
            # The empty field has nothing of its own to undo: the window's Undo and Redo
            # (the last save) take the keys, as in the content box.
            return True  # left unaccepted: the window's shortcut runs
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        key = event.key()
        if watched in self._chips and key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.remove_tag(watched.property("tag"))
            return True
        if watched is self.field and key == Qt.Key.Key_Backspace and not self.field.text():
            if self._chips:
                self.remove_tag(self._chips[-1].property("tag"))
            return True
        return False
