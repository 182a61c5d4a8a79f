"""Light and dark palettes follow the system's colour scheme."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from memgui.ui.theme.palette import apply_color_scheme, dark_palette


def lightness(app: QApplication, role) -> int:
    return app.palette().color(role).lightness()


def test_dark_and_light_schemes_switch_the_palette(qapp) -> None:
    window, text = dark_palette().ColorRole.Window, dark_palette().ColorRole.Text
    try:
        apply_color_scheme(qapp, Qt.ColorScheme.Dark)
        assert lightness(qapp, window) < 80 and lightness(qapp, text) > 180
        apply_color_scheme(qapp, Qt.ColorScheme.Light)
        assert lightness(qapp, window) > 180 and lightness(qapp, text) < 80
    finally:
        apply_color_scheme(qapp, qapp.styleHints().colorScheme())


def test_unknown_scheme_keeps_the_style_palette(qapp) -> None:
    apply_color_scheme(qapp, Qt.ColorScheme.Unknown)
    assert qapp.palette() == qapp.style().standardPalette()
