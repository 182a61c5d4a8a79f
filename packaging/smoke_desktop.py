"""The smoke test's desktop check: `memgui install-desktop` from the build, then a brain
opened as a file manager opens it (GIO, which GNOME's Files and most desktops use) starts
the built memgui on that brain."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from smoke_test import Artefact

APP_ID = "io.memgui.memgui"
WAIT_S = 60.0


def processes_running(program: Path, argument: str) -> list[int]:
    """Ids of the processes whose command line is `program` … `argument` …."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # gone meanwhile
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        if words and words[0] == str(program) and argument in words:
            found.append(int(entry.name))
    return found


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up after {WAIT_S:.0f} s waiting for {what}")
        time.sleep(0.05)


def check_desktop_integration(app: Artefact) -> str:
    for tool in ("gio", "desktop-file-validate", "appstreamcli"):
        assert shutil.which(tool), f"{tool} is not installed (make system-packages)"
    data, config = app.scratch / "xdg-data", app.scratch / "xdg-config"
    env = dict(app.env, XDG_DATA_HOME=str(data), XDG_CONFIG_HOME=str(config))
    app.ok("install-desktop", env=env)
    entry = data / "applications" / f"{APP_ID}.desktop"
    assert f"Exec={app.program} %f" in entry.read_text(), entry.read_text()
    validated = subprocess.run(
        ["desktop-file-validate", str(entry)], capture_output=True, text=True
    )
    assert validated.returncode == 0 and not validated.stdout.strip(), validated.stdout
    metainfo = data / "metainfo" / f"{APP_ID}.metainfo.xml"
    checked = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(metainfo)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout
    for size in (16, 48, 256, 512):
        assert (data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").is_file()
    default = subprocess.run(
        ["gio", "mime", "application/vnd.sqlite3"], env=env, capture_output=True, text=True
    ).stdout
    assert f"Default application for “application/vnd.sqlite3”: {APP_ID}.desktop" in default, (
        default
    )
    brain = app.scratch / "a brain from the file manager.sqlite"
    shutil.copyfile(app.scratch / "sample.sqlite", brain)
    subprocess.run(["gio", "open", str(brain)], env=env, check=True, timeout=WAIT_S)
    try:
        wait_for(lambda: processes_running(app.program, str(brain)), "memgui to open the brain")
    finally:  # whatever happened, no memgui of this check is left running
        for pid in processes_running(app.program, str(brain)):
            os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not processes_running(app.program, str(brain)), "memgui to close")
    app.ok("install-desktop", "--uninstall", env=env)
    assert not entry.exists() and not metainfo.exists(), "uninstall left files"
    return "installed, validated, `gio open` started the build on the brain, uninstalled"
