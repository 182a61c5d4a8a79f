"""Light and dark palettes that follow the system's colour scheme.

Fusion takes the system palette where the platform reports one; where it reports a dark
scheme but no palette (some Linux desktops, remote sessions), memgui sets Fusion's dark
colours itself, and follows later switches through `colorSchemeChanged`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

_DARK = {
    QPalette.ColorRole.Window: "#2b2b2e",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1f1f22",
    QPalette.ColorRole.AlternateBase: "#2a2a2e",
    QPalette.ColorRole.ToolTipBase: "#3a3a3f",
    QPalette.ColorRole.ToolTipText: "#f0f0f0",
    QPalette.ColorRole.PlaceholderText: "#8a8a90",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#333338",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff6b6b",
    QPalette.ColorRole.Highlight: "#3d6fb6",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#7aa7ff",
}


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    disabled = QColor("#77777c")
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, disabled)
    return palette


def apply_color_scheme(app: QApplication, scheme: Qt.ColorScheme) -> None:
    """Dark colours for a dark scheme; the style's standard palette otherwise."""
    if scheme == Qt.ColorScheme.Dark:
        app.setPalette(dark_palette())
    else:
        app.setPalette(app.style().standardPalette())


def follow_system(app: QApplication) -> None:
    hints = app.styleHints()
    apply_color_scheme(app, hints.colorScheme())
    hints.colorSchemeChanged.connect(lambda scheme: apply_color_scheme(app, scheme))
