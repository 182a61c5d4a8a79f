"""Before Qt starts: the libraries its X11 plugin lacks are named, with the command that
installs them, instead of Qt aborting without a word about them."""

from __future__ import annotations

import subprocess

from memgui.__main__ import main
from memgui.ui import qt_platform

LDD = """\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f1)
\tlibxcb-cursor.so.0 => not found
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxkbcommon-x11.so.0 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f2)
"""


def fake_ldd(*_args, **_kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["ldd"], 0, stdout=LDD, stderr="")


def test_the_missing_libraries_and_their_packages_are_named(tmp_path):
    missing = qt_platform.missing_libraries(tmp_path / "libqxcb.so", run=fake_ldd)
    assert missing == [
        "libxcb-cursor.so.0",
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
        "libxkbcommon-x11.so.0",
    ]
    assert qt_platform.install_command(missing, root=False) == (
        "sudo apt-get install -y libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0"
    )
    assert qt_platform.package_of("libxcb-render-util.so.0") == "libxcb-render-util0"


def test_only_an_x11_start_is_checked():
    assert qt_platform.xcb_in_use({"DISPLAY": ":0"}, "linux")
    assert not qt_platform.xcb_in_use({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert qt_platform.xcb_in_use({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not qt_platform.xcb_in_use({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert not qt_platform.xcb_in_use({"DISPLAY": ":0"}, "darwin")


def test_memgui_says_what_is_missing_instead_of_qt_aborting(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda *_a, **_k: ["libxcb-cursor.so.0"])
    code = main(["--brain", str(tmp_path / "b.sqlite")])
    err = capsys.readouterr().err
    assert code == 1
    assert "libxcb-cursor.so.0" in err and "apt-get install -y libxcb-cursor0" in err
    assert not (tmp_path / "b.sqlite").exists()  # stopped before anything was opened


def test_make_runs_step_installs_or_says_the_command(monkeypatch, capsys, tmp_path):
    plugin = tmp_path / "libqxcb.so"
    plugin.write_bytes(b"")
    monkeypatch.setattr(qt_platform, "xcb_plugin", lambda: plugin)
    monkeypatch.setattr(qt_platform.sys, "platform", "linux")
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda *_a, **_k: ["libxcb-icccm.so.4"])
    monkeypatch.setattr(qt_platform.os, "geteuid", lambda: 1000)  # not root: says the command
    assert qt_platform.install_missing() == 1
    assert "sudo apt-get install -y libxcb-icccm4" in capsys.readouterr().err
    ran: list[list[str]] = []
    missing = [["libxcb-icccm.so.4"], []]  # installed by the run below
    monkeypatch.setattr(qt_platform.os, "geteuid", lambda: 0)
    monkeypatch.setattr(qt_platform.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(qt_platform, "missing_libraries", lambda *_a, **_k: missing.pop(0))
    done = qt_platform.install_missing(
        run=lambda args, **_k: ran.append(args) or subprocess.CompletedProcess(args, 0)
    )
    assert done == 0 and ran == [["/usr/bin/apt-get", "install", "-y", "libxcb-icccm4"]]
