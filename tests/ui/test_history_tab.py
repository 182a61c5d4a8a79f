"""The History tab says what each change did — the content's lines, the tags, the other
memory of a link by name, what a merge took in — so that restoring is never blind."""

from __future__ import annotations

from tests.support.window import open_window, select_row, wait_idle


def history_of(window, trace_id):
    tab = window.detail.history
    window.detail.setCurrentWidget(tab)
    select_row(window, window.model.row_of(trace_id))
    return tab


def test_history_shows_diffs_link_names_and_what_a_merge_took_in(qtbot, tmp_path, brain_path):
    window = open_window(qtbot, tmp_path, brain_path)
    brain = window.session.brain
    a, b, c = (window.model.id_at(r) for r in range(3))
    first = brain.get(a)
    brain.update(
        a,
        {"content": first.content + "\nOn Fridays only.", "tags": [*first.tags, "urgent"]},
        expect_version=first.version,
    )
    brain.link(a, b, "relates_to")
    other_name = brain.get(b).content.splitlines()[0]
    absorbed_name = brain.get(c).content.splitlines()[0]
    brain.merge([a, c], content="Merged: " + first.content)
    window.model.refresh()
    wait_idle(qtbot, window)
    tab = history_of(window, a)
    rows = [tab.model.index(r, 3).data() for r in range(tab.model.rowCount())]
    assert rows[0].startswith("merge: content") and rows[0].endswith(f"took in “{absorbed_name}”")
    assert rows[1] == f"linked ↔ “{other_name}” (relates_to)"
    assert rows[2] == "update: content, tags +urgent"
    assert rows[3] == "created"
    assert not any("mt_" in row for row in rows)  # memories by name, never by id
    tab.view.selectRow(2)
    details = tab.details.toPlainText()
    assert "+On Fridays only." in details and "Tags: +urgent" in details
    tab.view.selectRow(0)
    assert absorbed_name in tab.details.toPlainText()
    window.close()
