"""A cognitive search in the window: each result says why it ranks where it does."""

from __future__ import annotations

from PySide6.QtCore import Qt

from tests.support.waiting import WAIT_MS


def test_the_why_line_follows_the_chosen_result(qtbot, window):
    window.search_bar.set_mode("cognitive")
    window.search_bar.set_query("Python OR Alice")
    qtbot.waitUntil(lambda: not window.model.busy and window.model.rowCount() == 2, timeout=WAIT_MS)
    assert window.search_bar.status_label.text() == "2 results · cognitive"
    why = window.search_bar.why_label
    first = window.model.id_at(0)
    assert window.select_id(first)
    qtbot.waitUntil(why.isVisible, timeout=WAIT_MS)
    assert why.text().startswith("Why this result: ")
    assert why.text().endswith(window.model.why_of(first))
    assert "similarity" in why.text() and "×0.35" in why.text()
    content = [c for c in range(window.model.columnCount()) if window.model.headerData(
        c, Qt.Orientation.Horizontal) == "Content"][0]  # fmt: skip
    tip = window.model.index(0, content).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.endswith(f"Why this result: {window.model.why_of(first)}")
    window.search_bar.set_mode("keyword")
    qtbot.waitUntil(
        lambda: window.search_bar.status_label.text().endswith("keyword"), timeout=WAIT_MS
    )
    assert not why.isVisible() and window.model.why_of(first) is None
