"""Which key presses ask for Undo and Redo (the platform's keys and Ctrl+Shift+Z, Ctrl+Y)."""

from __future__ import annotations

from PySide6.QtGui import QKeyEvent, QKeySequence

REDO_KEYS = (QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y"))


def is_undo(event: QKeyEvent) -> bool:
    return event.matches(QKeySequence.StandardKey.Undo)


def is_redo(event: QKeyEvent) -> bool:
    pressed = QKeySequence(event.keyCombination())
    return event.matches(QKeySequence.StandardKey.Redo) or pressed in REDO_KEYS
