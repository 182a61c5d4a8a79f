"""Seeing where you are: "N of M memories", why a list is empty and the way back, counts
in the filter lists, tags that complete, and a new brain opened without the last search."""

from __future__ import annotations

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window, wait_idle


def test_a_filtered_table_says_n_of_m_and_an_empty_one_says_why(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    assert window.counts_label.text() == "5 memories · 0 in trash"
    window.filter_bar.set_filter(TraceFilter(type="semantic"))
    wait_idle(qtbot, window)
    assert window.counts_label.text() == "3 of 5 memories · 0 in trash"
    note = window.summary.note
    assert not note.isVisible()
    window.filter_bar.set_filter(TraceFilter(type="semantic", tag="deploy"))
    wait_idle(qtbot, window)
    assert window.model.rowCount() == 0
    assert note.isVisible()
    assert "Nothing matches type semantic, tag deploy" in note.text()
    assert window.counts_label.text() == "0 of 5 memories · 0 in trash"
    note.linkActivated.emit("clear")  # the link under the reason
    wait_idle(qtbot, window)
    assert window.filter_bar.current_filter() == TraceFilter()
    assert window.model.rowCount() == 5 and not note.isVisible()
    window.search_bar.set_query("nowhere-to-be-found")
    wait_idle(qtbot, window)
    assert "Nothing matches the search “nowhere-to-be-found”" in note.text()
    window.close()


def test_filter_lists_show_counts_and_the_tag_field_completes(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    bar = window.filter_bar
    texts = [bar.type_box.itemText(i) for i in range(bar.type_box.count())]
    assert "Any (5)" in texts and "semantic (3)" in texts and "episodic (0)" in texts
    assert bar.type_box.itemData(texts.index("semantic (3)")) == "semantic"  # filters as before
    assert "DECISION (1)" in [bar.category_box.itemText(i) for i in range(bar.category_box.count())]
    completer = bar.tag_edit.completer()
    completer.setCompletionPrefix("de")
    assert completer.currentCompletion() == "deploy"
    window.close()


def test_a_brain_opened_after_a_search_shows_all_its_memories(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    window.search_bar.set_query("invoice")
    wait_idle(qtbot, window)
    assert window.model.rowCount() == 1
    other = tmp_path / "other.sqlite"
    with Brain.open(other) as brain:
        for n in range(3):
            brain.add(f"Another brain's memory {n}")
    assert window.files.open_path(other)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: window.model.rowCount() == 3, timeout=WAIT_MS)
    assert window.search_bar.query() == ""
    assert window.pages.currentWidget() is window.splitter  # not the welcome page
    window.close()


def test_search_results_show_a_line_around_the_match(qtbot, tmp_path):
    path = tmp_path / "notes.sqlite"
    long_note = (
        "Weekly notes. We talked about the holidays, the new coffee machine and the office "
        "plants for a long while. Then: the deployment to production goes through staging "
        "first, and only on green checks."
    )
    with Brain.open(path) as brain:
        brain.add(long_note)
    window = open_window(qtbot, tmp_path, path)
    assert window.model.index(0, 0).data().startswith("Weekly notes.")
    window.search_bar.set_query("staging")
    wait_idle(qtbot, window)
    shown = window.model.index(0, 0).data()
    assert "staging" in shown and shown.startswith("…")
    window.search_bar.set_query("")
    wait_idle(qtbot, window)
    assert window.model.index(0, 0).data().startswith("Weekly notes.")
    window.close()
