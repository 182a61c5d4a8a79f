"""SVG icons shipped in `memgui/resources/icons`, loaded once and cached by name."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

ICON_DIR = Path(__file__).resolve().parents[2] / "resources" / "icons"


@cache
def icon(name: str) -> QIcon:
    """The icon `name` (file stem); a missing file raises so a typo never ships silently."""
    path = ICON_DIR / f"{name}.svg"
    if not path.is_file():
        raise FileNotFoundError(f"no icon named {name!r} in {ICON_DIR}")
    return QIcon(str(path))


def icon_names() -> list[str]:
    return sorted(p.stem for p in ICON_DIR.glob("*.svg"))
