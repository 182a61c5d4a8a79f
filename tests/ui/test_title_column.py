"""The Title column: shown first by default, the title or (in italics) the start of the text,
sorted by the core, found by search; a layout saved before it existed gets it too."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from memgui.core.brain import Brain
from memgui.ui.models.trace_columns import COLUMNS, TITLE_COLUMN
from memgui.ui.models.trace_table_model import TraceTableModel
from memgui.ui.views.trace_table_view import COLUMN_COUNT_KEY, HEADER_STATE_KEY, TraceTableView


def titled_brain(path) -> None:
    with Brain.open(path, actor="test") as brain:
        brain.add("Zebra crossings are painted white.", metadata={"title": "beta road notes"})
        brain.add("Alpha release went out.\nMore lines.", metadata={"title": "Alpha launch"})
        brain.add("An untitled memory about gamma rays and the rest of its long text " * 3)


def test_titles_show_and_untitled_memories_show_the_start_of_their_text(
    tmp_path, qapp, qtmodeltester
):
    path = tmp_path / "brain.sqlite"
    titled_brain(path)
    with Brain.open(path, actor="test") as brain:
        model = TraceTableModel(brain)
        model.refresh()
        qtmodeltester.check(model)
        shown = {model.index(r, TITLE_COLUMN).data(): r for r in range(model.rowCount())}
        assert {"beta road notes", "Alpha launch"} <= set(shown)
        untitled = next(t for t in shown if t not in ("beta road notes", "Alpha launch"))
        assert untitled.startswith("An untitled memory about gamma rays") and untitled.endswith("…")
        assert len(untitled) <= 81
        font = model.index(shown[untitled], TITLE_COLUMN).data(Qt.ItemDataRole.FontRole)
        assert font is not None and font.italic()
        titled = model.index(shown["Alpha launch"], TITLE_COLUMN)
        assert titled.data(Qt.ItemDataRole.FontRole) is None

        model.sort(TITLE_COLUMN, Qt.SortOrder.AscendingOrder)
        assert model.query.order == "title"
        order = [model.index(r, TITLE_COLUMN).data() for r in range(model.rowCount())]
        assert order == ["Alpha launch", untitled, "beta road notes"]  # case folded

        model.set_search("launch")
        assert [model.index(r, TITLE_COLUMN).data() for r in range(model.rowCount())] == [
            "Alpha launch"
        ]


def test_the_title_column_shows_first_also_over_a_layout_saved_before_it(tmp_path, qtbot):
    path = tmp_path / "brain.sqlite"
    titled_brain(path)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    with Brain.open(path, actor="test") as brain:
        model = TraceTableModel(brain)
        view = TraceTableView(settings)
        qtbot.addWidget(view)
        view.setModel(model)
        header = view.horizontalHeader()
        assert header.visualIndex(TITLE_COLUMN) == 0 and not header.isSectionHidden(TITLE_COLUMN)
        # A layout of an earlier version: one column fewer, no column count saved.
        header.setSectionHidden(TITLE_COLUMN, True)
        header.moveSection(header.visualIndex(TITLE_COLUMN), len(COLUMNS) - 1)
        settings.setValue(HEADER_STATE_KEY, header.saveState())
        settings.remove(COLUMN_COUNT_KEY)
        again = TraceTableView(settings)
        qtbot.addWidget(again)
        again.setModel(TraceTableModel(brain))
        shown = again.horizontalHeader()
        assert shown.visualIndex(TITLE_COLUMN) == 0 and not shown.isSectionHidden(TITLE_COLUMN)
        # Once saved with it, the person's choice stays.
        again.set_column_visible(TITLE_COLUMN, False)
        third = TraceTableView(settings)
        qtbot.addWidget(third)
        third.setModel(TraceTableModel(brain))
        assert third.horizontalHeader().isSectionHidden(TITLE_COLUMN)
