"""Screenshots, icons, the sample brain, and the PySide6 void-method reference trap."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QImage, QPen
from PySide6.QtWidgets import QGraphicsEllipseItem

from memgui.core import sample_brain
from memgui.core.brain import Brain
from memgui.core.errors import NotFound
from memgui.ui.screenshot import render
from memgui.ui.theme.icons import icon, icon_names
from tests.support.waiting import WAIT_MS


def test_void_qt_calls_do_not_leak_references_to_none(qapp):
    # PySide6 6.12.0 on CPython 3.11 drops a reference to None on every void call and
    # aborts the interpreter after a few thousand (DESIGN.md §7).
    item = QGraphicsEllipseItem(0, 0, 10, 10)
    pen = QPen()
    before = sys.getrefcount(None)
    for n in range(3000):
        item.setPos(QPointF(n, n))
        item.setPen(pen)
    assert sys.getrefcount(None) >= before


def test_every_icon_loads():
    names = icon_names()
    assert {"new", "save", "delete", "restore", "purge", "undo", "redo", "memgui"} <= set(names)
    for name in names:
        assert not icon(name).isNull(), name
    with pytest.raises(FileNotFoundError, match="nope"):
        icon("nope")


def test_sample_brain_is_built_fresh_and_never_overwritten(tmp_path):
    first = sample_brain.fresh_copy(tmp_path)
    second = sample_brain.fresh_copy(tmp_path)
    assert first != second
    with Brain.open(first) as brain:
        info = brain.info()
        assert info["brain_id"] == "sample" and info["live"] >= 20 and info["deleted"] == 1
        # The import reviewed; the agents' edits after it wait for review.
        assert [b.actor for b in brain.unreviewed_batches().batches] == [
            "mcp:planner",
            "consolidate",
            "cli",
            "mcp:planner",
        ]
    with pytest.raises(FileExistsError):
        sample_brain.build(first)


def test_screenshot_writes_a_png_of_the_requested_size(qapp, tmp_path, brain_path):
    with Brain.open(brain_path) as brain:
        chosen = brain.list_ids()[2]
    out = tmp_path / "shots" / "main.png"
    render(str(brain_path), str(out), select_id=chosen, size=(1000, 640))
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1000, 640)
    # The window drew something, not a blank rectangle.
    colours = {image.pixel(x, y) for x in range(0, 1000, 37) for y in range(0, 640, 29)}
    assert len(colours) > 5


def test_screenshot_refuses_bad_input_and_writes_nothing(qapp, tmp_path, brain_path):
    out = tmp_path / "none.png"
    with pytest.raises(FileNotFoundError, match="no brain at"):
        render(str(tmp_path / "missing.sqlite"), str(out))
    with pytest.raises(NotFound, match="mt_nope"):
        render(str(brain_path), str(out), select_id="mt_nope")
    with pytest.raises(ValueError, match="size must be between 200x200 and 10000x10000"):
        render(str(brain_path), str(out), size=(10, 10))
    assert not out.exists()


def test_default_brain_is_created_on_first_start(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from memgui.ui.app import create_window

    target = tmp_path / "data" / "brain.sqlite"
    monkeypatch.setenv("MEMGUI_BRAIN", str(target))
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = create_window(None, None, settings=settings, live=False)
    qtbot.addWidget(window)
    assert target.is_file() and window.session.path == target
    qtbot.waitUntil(
        lambda: window.counts_label.text() == "0 memories · 0 in trash", timeout=WAIT_MS
    )
    assert window.pages.currentWidget() is window.welcome
    assert "brain.sqlite [brain]" in window.windowTitle()
    window.close()
