"""What the frozen build holds of Qt and of Python's standard library, in one place: the spec
(`memgui.spec`), the Qt hooks (`hooks/`) and the tests of the packaging inputs read it.

memgui's widgets use four Qt modules (QtCore, QtGui, QtWidgets, QtSvg). PyInstaller's Qt
hooks collect every plugin of each type a module names, and through them libraries memgui
never loads: the eglfs and evdev plugins (embedded boards), the GTK 3 theme (it links GTK,
cairo and pango from the build machine), the PDF image format and the virtual keyboard
(QtPdf, QtQml, QtQuick). The build keeps the plugins below and drops the rest, before
PyInstaller follows their links.
"""

from __future__ import annotations

# Qt's Python modules memgui imports; every other PySide6 module is excluded.
QT_MODULES = ("QtCore", "QtGui", "QtWidgets", "QtSvg")

ALL = "*"
# Plugin type -> the plugin files kept (ALL: every one). A type not named is not shipped.
QT_PLUGINS: dict[str, frozenset[str] | str] = {
    # X11 and Wayland desktops; offscreen and minimal for `memgui screenshot` and tests.
    "platforms": frozenset({"libqxcb.so", "libqwayland.so", "libqoffscreen.so", "libqminimal.so"}),
    # The desktop's file dialogs and colour scheme through the XDG portal (no GTK linked).
    "platformthemes": frozenset({"libqxdgdesktopportal.so"}),
    # Dead keys and compose sequences, and input methods (IBus) for non-Latin scripts.
    "platforminputcontexts": frozenset(
        {"libcomposeplatforminputcontextplugin.so", "libibusplatforminputcontextplugin.so"}
    ),
    # The app's icons are SVG; PNG is built into QtGui.
    "iconengines": frozenset({"libqsvgicon.so"}),
    "imageformats": frozenset({"libqsvg.so"}),
    # OpenGL under X11 and Wayland (Qt loads them at start; small).
    "xcbglintegrations": ALL,
    "wayland-decoration-client": ALL,
    "wayland-graphics-integration-client": ALL,
    "wayland-shell-integration": ALL,
}

# Python modules never shipped: `readline` links GNU readline (GPL-3.0-only: nothing
# GPL-only ships) and is only used by interactive consoles (pdb, code); tkinter is another
# toolkit.
EXCLUDED_MODULES = ("readline", "tkinter", "_tkinter")


def keeps_plugin(plugin_type: str, file_name: str) -> bool:
    """Whether the build ships the Qt plugin `file_name` of `plugin_type`."""
    kept = QT_PLUGINS.get(plugin_type)
    if kept is None:
        return False
    return kept == ALL or file_name in kept


def excluded_qt_modules(available: list[str]) -> list[str]:
    """`PySide6.X` for every Qt module of the installed PySide6 memgui does not use."""
    return sorted(f"PySide6.{name}" for name in available if name not in QT_MODULES)


def trimmed_qt_dependencies(hook_file: str) -> tuple[list, list, list]:
    """PyInstaller's own collection for the Qt module a hook file names (`hook-PySide6.X.py`),
    without the plugins `QT_PLUGINS` leaves out and without Qt's translations (memgui's
    window is in English and loads none)."""
    from PyInstaller.utils.hooks.qt import add_qt6_dependencies

    hiddenimports, binaries, datas = add_qt6_dependencies(hook_file)
    kept_binaries = []
    for source, destination in binaries:
        parts = destination.replace("\\", "/").split("/")
        if "plugins" in parts and parts.index("plugins") + 1 < len(parts):
            plugin_type = parts[parts.index("plugins") + 1]
            if not keeps_plugin(plugin_type, source.replace("\\", "/").rsplit("/", 1)[-1]):
                continue
        kept_binaries.append((source, destination))
    kept_datas = [(s, d) for s, d in datas if "translations" not in d.replace("\\", "/").split("/")]
    return hiddenimports, kept_binaries, kept_datas
