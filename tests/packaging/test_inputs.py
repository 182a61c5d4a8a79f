"""What `make package` builds from, checked without building (the build and its smoke test
run in `make package`): the spec and hooks, which Qt the build keeps, the desktop entry and
the AppStream metainfo as their validators see them."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import PySide6
import pytest

from memgui import APP_ID, __version__
from tests.support.packaging import packaging_module
from tests.support.paths import PACKAGING, ROOT

DESKTOP = PACKAGING / "linux" / f"{APP_ID}.desktop"
METAINFO = PACKAGING / "linux" / f"{APP_ID}.metainfo.xml"


def needs(tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed: make system-packages installs it")


def test_the_desktop_entry_validates() -> None:
    needs("desktop-file-validate")
    done = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "", done.stdout


def test_the_metainfo_validates_with_no_warning() -> None:
    needs("appstreamcli")
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--pedantic", str(METAINFO)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout
    problems = [line for line in done.stdout.splitlines() if line.startswith(("W:", "E:"))]
    assert problems == []


def test_the_metainfo_describes_this_release() -> None:
    root = ET.parse(METAINFO).getroot()
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    assert root.find("developer").findtext("name")
    assert root.find("content_rating").get("type") == "oars-1.1"
    newest = root.find("releases/release")
    assert newest.get("version") == __version__, "the newest release is this version"
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(__version__)} — {newest.get('date')}$", changelog, re.M)
    for shot in root.findall("screenshots/screenshot"):
        assert shot.findtext("caption")
        published = shot.findtext("image").rsplit("/", 1)[-1]
        assert (ROOT / "docs" / "screenshots" / published).is_file(), published


def test_the_desktop_entry_and_metainfo_agree() -> None:
    entry = dict(line.split("=", 1) for line in DESKTOP.read_text().splitlines() if "=" in line)
    assert entry["Icon"] == APP_ID and entry["Exec"] == "memgui %f"
    types = set(filter(None, entry["MimeType"].split(";")))
    provided = {m.text for m in ET.parse(METAINFO).getroot().findall("provides/mediatype")}
    assert provided <= types and "application/vnd.sqlite3" in types


def test_the_spec_and_hooks_are_python() -> None:
    for path in [PACKAGING / "memgui.spec", *sorted((PACKAGING / "hooks").glob("*.py"))]:
        compile(path.read_text(), str(path), "exec")
    bundle = packaging_module("bundle")
    for module in bundle.QT_MODULES:
        assert (PACKAGING / "hooks" / f"hook-PySide6.{module}.py").is_file(), module


def test_memgui_imports_only_the_qt_modules_the_build_keeps() -> None:
    """A module imported but excluded from the build would fail only in the frozen app."""
    kept = set(packaging_module("bundle").QT_MODULES)
    used = set()
    for path in (ROOT / "memgui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("PySide6."):
                used.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                used |= {a.name.split(".")[1] for a in node.names if a.name.startswith("PySide6.")}
    assert used and used <= kept, f"add to QT_MODULES in packaging/bundle.py: {used - kept}"


def test_every_plugin_the_build_keeps_exists_in_this_qt() -> None:
    bundle = packaging_module("bundle")
    plugins = Path(PySide6.__file__).parent / "Qt" / "plugins"
    for plugin_type, kept in bundle.QT_PLUGINS.items():
        assert (plugins / plugin_type).is_dir(), plugin_type
        if kept != bundle.ALL:
            for name in kept:
                assert (plugins / plugin_type / name).is_file(), f"{plugin_type}/{name}"


def test_what_the_build_leaves_out() -> None:
    bundle = packaging_module("bundle")
    assert bundle.keeps_plugin("platforms", "libqxcb.so")
    assert bundle.keeps_plugin("wayland-shell-integration", "libxdg-shell.so")
    assert not bundle.keeps_plugin("platformthemes", "libqgtk3.so")
    assert not bundle.keeps_plugin("platforms", "libqeglfs.so")
    assert not bundle.keeps_plugin("egldeviceintegrations", "libqeglfs-kms-integration.so")
    assert not bundle.keeps_plugin("imageformats", "libqpdf.so")
    excluded = bundle.excluded_qt_modules(["QtCore", "QtGui", "QtNetwork", "QtQml", "QtSvg"])
    assert excluded == ["PySide6.QtNetwork", "PySide6.QtQml"]
    assert "readline" in bundle.EXCLUDED_MODULES
