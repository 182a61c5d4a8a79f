"""The user guide shows a current picture of every view it documents: each picture in
docs/user-guide.md is one `make screenshots` draws (docs/make_screenshots.py), it is there at
the size the command draws, and the command's options are ones `memgui screenshot` takes."""

from __future__ import annotations

import importlib.util
import re
import struct
import sys
from types import ModuleType

import pytest

import memgui.__main__  # noqa: F401 - the app registers `screenshot`
from memgui.cli.main import build_parser
from tests.support.paths import ROOT

GUIDE = ROOT / "docs" / "user-guide.md"
SECTIONS = (
    "Installing",
    "The first minute",
    "Browsing",
    "Searching",
    "Editing and undo",
    "Importing",
    "Exporting",
    "Agents",
    "Agent activity",
    "The graph",
    "Consolidation",
    "Settings",
    "Where files live",
    "Troubleshooting",
)


def screenshot_script() -> ModuleType:
    name = "memgui_docs_make_screenshots"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "make_screenshots.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
    return sys.modules[name]


def pictures_in_guide() -> list[str]:
    return re.findall(r"!\[[^\]]+\]\(screenshots/([^)]+)\)", GUIDE.read_text())


def test_every_picture_of_the_guide_is_made_by_make_screenshots() -> None:
    made = [shot.file for shot in screenshot_script().SHOTS]
    shown = pictures_in_guide()
    assert len(set(made)) == len(made), "two shots write one file"
    assert sorted(set(shown)) == sorted(made)


@pytest.mark.parametrize("shot", screenshot_script().SHOTS, ids=lambda shot: shot.file)
def test_each_picture_is_there_at_the_size_it_is_drawn(shot) -> None:
    data = (ROOT / "docs" / "screenshots" / shot.file).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{shot.file}: run make screenshots"
    assert struct.unpack(">II", data[16:24]) == shot.size, shot.file


@pytest.mark.parametrize("shot", screenshot_script().SHOTS, ids=lambda shot: shot.file)
def test_each_shot_asks_memgui_screenshot_for_what_it_has(shot) -> None:
    options = [o.format(notes="notes") for o in shot.options]
    args = build_parser().parse_args(["screenshot", "b.sqlite", "out.png", *options])
    assert args.command == "screenshot"
    assert shot.brain in ("sample", "empty", "consolidate")


def test_the_guide_has_a_section_for_every_part_of_the_app() -> None:
    headings = re.findall(r"^## (.+)$", GUIDE.read_text(), re.M)
    assert [h for h in SECTIONS if h not in headings] == []
