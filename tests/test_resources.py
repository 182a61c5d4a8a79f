"""The package's files are copies of the masters in resources/, and the app icon is rendered
at every size a desktop asks for (`make resources` makes both)."""

from __future__ import annotations

import struct

import pytest

from tests.support.paths import ROOT

RESOURCES = ROOT / "resources"
PACKAGE = ROOT / "memgui" / "resources"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def test_every_package_file_is_its_master_unchanged() -> None:
    masters = {p.name: p for p in (RESOURCES / "icons").glob("*.svg")}
    copies = {p.name: p for p in (PACKAGE / "icons").glob("*.svg")}
    assert sorted(copies) == sorted(masters) and "memgui.svg" in masters
    for name, master in masters.items():
        assert copies[name].read_bytes() == master.read_bytes(), f"{name}: run make resources"
    sample = (PACKAGE / "sample_brain.json").read_bytes()
    assert sample == (RESOURCES / "sample-brain.json").read_bytes(), "run make resources"


def test_the_desktop_files_in_the_package_are_their_masters() -> None:
    """`memgui install-desktop` installs the package's copies: the desktop entry and the
    metainfo (masters in packaging/linux/) and the app icon's PNGs."""
    desktop = PACKAGE / "desktop"
    masters = sorted((ROOT / "packaging" / "linux").glob("io.memgui.memgui.*"))
    assert [m.name for m in masters] == [
        "io.memgui.memgui.desktop",
        "io.memgui.memgui.metainfo.xml",
    ]
    for master in masters:
        assert (desktop / master.name).read_bytes() == master.read_bytes(), "run make resources"
    for size in SIZES:
        png = f"memgui-{size}.png"
        copy = (desktop / "icons" / png).read_bytes()
        assert copy == (RESOURCES / "app-icon" / png).read_bytes(), "run make resources"


@pytest.mark.parametrize("size", SIZES)
def test_the_app_icon_is_a_png_of_each_size(size: int) -> None:
    data = (RESOURCES / "app-icon" / f"memgui-{size}.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (size, size)
