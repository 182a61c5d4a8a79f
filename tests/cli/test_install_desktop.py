"""`memgui install-desktop` puts memgui in this user's desktop (XDG folders from the
environment), and a brain opened as a file manager opens it starts memgui on that brain."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memgui import APP_ID
from memgui.cli.commands.desktop import associate, quoted_exec
from memgui.core.sample_brain import build
from tests.support.waiting import WAIT_S

SQLITE = "application/vnd.sqlite3"


def desktop_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "MEMGUI_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        QT_QPA_PLATFORM="offscreen",
        MEMGUI_OLLAMA_URL="http://127.0.0.1:9",
    )
    return env


def memgui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    argv = [str(Path(sys.executable).with_name("memgui")), *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def needs(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed: make system-packages installs it")


def test_installs_entry_metainfo_icons_and_the_file_association(tmp_path: Path) -> None:
    env = desktop_env(tmp_path)
    done = memgui(env, "install-desktop")
    assert done.returncode == 0, done.stderr
    data = tmp_path / "data"
    entry = (data / "applications" / f"{APP_ID}.desktop").read_text()
    program = Path(sys.executable).with_name("memgui")
    assert f"\nExec={program} %f\n" in entry and f"\nTryExec={program}\n" in entry
    assert "\nMimeType=application/vnd.sqlite3;application/x-sqlite3;\n" in entry
    assert (data / "metainfo" / f"{APP_ID}.metainfo.xml").is_file()
    for size in (16, 22, 24, 32, 48, 64, 128, 256, 512):
        icon = data / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"
        png = icon.read_bytes()
        assert int.from_bytes(png[16:20], "big") == size, icon
    assert (data / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").is_file()
    mimeapps = (tmp_path / "config" / "mimeapps.list").read_text()
    assert f"[Default Applications]\n{SQLITE}={APP_ID}.desktop;\n" in mimeapps
    assert "opens SQLite files by default" in done.stdout


def test_uninstall_removes_what_it_installed(tmp_path: Path) -> None:
    env = desktop_env(tmp_path)
    assert memgui(env, "install-desktop").returncode == 0
    done = memgui(env, "install-desktop", "--uninstall")
    assert done.returncode == 0, done.stderr
    left = [p for p in (tmp_path / "data").rglob(f"{APP_ID}*")]
    assert left == []
    assert APP_ID not in (tmp_path / "config" / "mimeapps.list").read_text()


def test_another_default_is_kept_unless_asked(tmp_path: Path) -> None:
    mimeapps = tmp_path / "mimeapps.list"
    mimeapps.write_text(
        "# mine\n[Default Applications]\ntext/plain=editor.desktop;\n"
        f"{SQLITE}=sqlitebrowser.desktop;\n"
    )
    assert associate(mimeapps, f"{APP_ID}.desktop", make_default=False) == ["application/x-sqlite3"]
    text = mimeapps.read_text()
    assert text.startswith("# mine\n[Default Applications]\ntext/plain=editor.desktop;\n")
    assert f"{SQLITE}=sqlitebrowser.desktop;\n" in text
    assert f"[Added Associations]\n{SQLITE}={APP_ID}.desktop;\n" in text
    associate(mimeapps, f"{APP_ID}.desktop", make_default=True)
    assert f"{SQLITE}={APP_ID}.desktop;sqlitebrowser.desktop;\n" in mimeapps.read_text()


def test_exec_quotes_paths_as_the_desktop_spec_says() -> None:
    assert quoted_exec(["/opt/memgui/memgui"]) == "/opt/memgui/memgui"
    assert quoted_exec(["/home/a b/memgui"]) == '"/home/a b/memgui"'
    assert quoted_exec(["/x/$HOME/100%"]) == '"/x/\\$HOME/100%%"'


def test_installed_entry_is_a_valid_desktop_file(tmp_path: Path) -> None:
    needs("desktop-file-validate")
    env = desktop_env(tmp_path)
    assert memgui(env, "install-desktop").returncode == 0
    entry = tmp_path / "data" / "applications" / f"{APP_ID}.desktop"
    done = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "", done.stdout


@pytest.mark.slow
def test_a_brain_opened_from_the_file_manager_opens_memgui(tmp_path: Path) -> None:
    """GIO (the file managers' way to open a file) finds memgui for a .sqlite brain and starts
    it on that file."""
    needs("gio")
    env = desktop_env(tmp_path)
    assert memgui(env, "install-desktop").returncode == 0
    default = subprocess.run(["gio", "mime", SQLITE], env=env, capture_output=True, text=True)
    assert f"Default application for “{SQLITE}”: {APP_ID}.desktop" in default.stdout
    brain = build(tmp_path / "a brain, opened.sqlite")
    subprocess.run(["gio", "open", str(brain)], env=env, check=True, timeout=WAIT_S)
    try:
        assert wait_for_process(str(brain), present=True)
    finally:  # whatever happened, no memgui of this test is left running
        for pid in wait_for_process(str(brain), present=None):
            os.kill(pid, signal.SIGTERM)
        wait_for_process(str(brain), present=False)


def wait_for_process(argument: str, *, present: bool | None) -> list[int]:
    """The ids of the memgui processes started with `argument`, once there are some
    (present), once there are none (not present), or now (None)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = [
            pid
            for pid, argv in _processes()
            if argument in argv and any(Path(a).name == "memgui" for a in argv[:2])
        ]
        if present is None or bool(found) == present:
            return found
        assert time.monotonic() < deadline, f"memgui on {argument}: still {found}"
        time.sleep(0.05)


def _processes() -> list[tuple[int, list[str]]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                raw = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            found.append((int(entry.name), [a.decode() for a in raw.split(b"\0") if a]))
    return found
