"""Build what the package and the desktop take from the masters here (`make resources`).

- `icons/*.svg` (the masters) are copied to `memgui/resources/icons/`, where the app loads them.
- `sample-brain.json` is copied to `memgui/resources/sample_brain.json` (core/sample_brain.py).
- The app icon `icons/memgui.svg` is rendered to `app-icon/memgui-<N>.png` at the sizes a
  desktop asks for (the freedesktop hicolor theme, Windows and macOS icon sets).
- What `memgui install-desktop` installs goes to `memgui/resources/desktop/`: the desktop
  entry and AppStream metainfo (masters in `packaging/linux/`) and the app icon's PNGs.

Run it after changing a master; tests/test_resources.py fails while a copy differs.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent / "memgui" / "resources"
DESKTOP_MASTERS = HERE.parent / "packaging" / "linux"
APP_ICON = HERE / "icons" / "memgui.svg"
APP_ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def copies() -> dict[Path, Path]:
    """Each master and the package file made from it."""
    made = {svg: PACKAGE / "icons" / svg.name for svg in sorted((HERE / "icons").glob("*.svg"))}
    made[HERE / "sample-brain.json"] = PACKAGE / "sample_brain.json"
    for master in sorted(DESKTOP_MASTERS.glob("io.memgui.memgui.*")):
        made[master] = PACKAGE / "desktop" / master.name
    for size in APP_ICON_SIZES:
        made[app_icon_png(size)] = PACKAGE / "desktop" / "icons" / app_icon_png(size).name
    return made


def app_icon_png(size: int) -> Path:
    return HERE / "app-icon" / f"memgui-{size}.png"


def render_app_icon() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(APP_ICON))
    if not renderer.isValid():
        raise SystemExit(f"{APP_ICON} is not an SVG Qt can draw")
    for size in APP_ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        target = app_icon_png(size)
        target.parent.mkdir(exist_ok=True)
        if not image.save(str(target), "PNG"):
            raise SystemExit(f"could not write {target}")
    del app


def main() -> int:
    render_app_icon()  # first: the package takes copies of the PNGs
    for master, copy in copies().items():
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(master, copy)
    stale = {p.name for p in (PACKAGE / "icons").glob("*.svg")} - {
        m.name for m in (HERE / "icons").glob("*.svg")
    }
    for name in sorted(stale):  # an icon whose master is gone goes from the package too
        (PACKAGE / "icons" / name).unlink()
    print(f"copied {len(copies())} files into {PACKAGE}, rendered {len(APP_ICON_SIZES)} PNGs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
