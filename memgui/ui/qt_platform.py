"""Before Qt starts on Linux: does its X11 (xcb) platform plugin find the libraries it needs?

On a minimal Linux the plugin lacks `libxcb-cursor0`, `libxcb-icccm4`, `libxcb-keysyms1`…
and Qt, failing to load it, aborts the process with a message about plugins that names
none of them. So `memgui` looks first (`ldd` on the plugin, a few milliseconds) and, when
libraries are missing, says which ones and the one command that installs them; `make run`
runs `python -m memgui.ui.qt_platform --install`, which installs them itself when it can
(as root, with apt-get) and otherwise prints that command. Nothing here imports Qt.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from memgui.core.errors import MemguiError

XCB_PLUGIN = Path("Qt") / "plugins" / "platforms" / "libqxcb.so"
_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)
_SONAME = re.compile(r"^(lib[\w+.-]*?)\.so\.(\d+)")
# Debian/Ubuntu package names that do not follow "soname without .so, version appended".
PACKAGES = {"libxkbcommon-x11.so.0": "libxkbcommon-x11-0", "libxcb-util.so.1": "libxcb-util1"}


class QtPlatformMissing(MemguiError):
    """Qt's X11 platform plugin cannot load: libraries are missing (named, with the fix)."""

    def __init__(self, libraries: list[str], command: str) -> None:
        self.libraries, self.command = libraries, command
        super().__init__(
            "the window cannot open: Qt's X11 platform plugin needs libraries this system "
            f"lacks ({', '.join(libraries)}). Install them with:\n  {command}\n"
            "(or run `make run`, which does it when it can)"
        )


def xcb_in_use(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> bool:
    """Whether Qt would start with its X11 plugin: Linux, an X display, no other platform
    asked for, and no Wayland session it would prefer."""
    env = os.environ if env is None else env
    if not platform.startswith("linux"):
        return False
    asked = env.get("QT_QPA_PLATFORM", "").split(";")[0].strip()
    if asked:
        return asked == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def xcb_plugin() -> Path | None:
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    plugin = Path(next(iter(spec.submodule_search_locations))) / XCB_PLUGIN
    return plugin if plugin.is_file() else None


def missing_libraries(
    plugin: Path, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run
) -> list[str]:
    """The shared libraries `plugin` (or what it links) needs and the system lacks, by
    `ldd`; none when `ldd` is not there to tell."""
    if shutil.which("ldd") is None:
        return []
    try:
        found = run(["ldd", str(plugin)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted(set(_NOT_FOUND.findall(found.stdout)))


def package_of(library: str) -> str:
    """The Debian/Ubuntu package of a library soname: `libxcb-cursor.so.0` is
    `libxcb-cursor0`, `libxcb-render-util.so.0` `libxcb-render-util0`."""
    if library in PACKAGES:
        return PACKAGES[library]
    match = _SONAME.match(library)
    if match is None:
        return library
    name, version = match.groups()
    return f"{name}-{version}" if name[-1].isdigit() else f"{name}{version}"


def packages_for(libraries: list[str]) -> list[str]:
    return sorted({package_of(lib) for lib in libraries})


def install_command(libraries: list[str], root: bool | None = None) -> str:
    root = os.geteuid() == 0 if root is None else root
    return f"{'' if root else 'sudo '}apt-get install -y {' '.join(packages_for(libraries))}"


def check(env: Mapping[str, str] | None = None) -> None:
    """Raise `QtPlatformMissing` when Qt would start with an X11 plugin that cannot load."""
    if not xcb_in_use(env):
        return
    plugin = xcb_plugin()
    missing = missing_libraries(plugin) if plugin is not None else []
    if missing:
        raise QtPlatformMissing(missing, install_command(missing))


def install_missing(run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run) -> int:
    """`make run`'s step: install what the plugin lacks when root with apt-get; else say
    the command. 0 when nothing is missing (or it was installed), 1 when the person must act."""
    plugin = xcb_plugin()
    missing = missing_libraries(plugin) if plugin is not None and sys.platform == "linux" else []
    if not missing:
        return 0
    command = install_command(missing)
    apt = shutil.which("apt-get")
    if plugin is not None and os.geteuid() == 0 and apt is not None:
        print(f"memgui: installing what Qt's X11 plugin needs: {command}", file=sys.stderr)
        install = [apt, "install", "-y", *packages_for(missing)]
        # A fresh system may have no package lists yet: fetch them once and try again.
        if run(install).returncode != 0:
            run([apt, "update"])
            run(install)
        if not missing_libraries(plugin, run):
            return 0
    print(f"memgui: {QtPlatformMissing(missing, command)}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(install_missing() if "--install" in sys.argv[1:] else 0)
