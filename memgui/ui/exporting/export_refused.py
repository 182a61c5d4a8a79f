"""The export dialog's list of refused traces: a bounded table and a line for the rest.

JSONL refuses every memory without an agent-memory category — a whole CSV or Markdown
import — so the list can be as long as the brain. The table shows the first
`REFUSED_SHOWN` (each with its memory's first line, one `get_many` of that many ids) and a
line says how many more there are; the saved list has them all. Listing 60,000 of them on
the GUI thread froze the window for 6–8 s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from memgui.core.errors import MemguiError
from memgui.core.io import Refusal

if TYPE_CHECKING:
    from memgui.core.brain import Brain

REFUSED_COLUMNS = ("Trace", "Memory", "Field", "Problem")
REFUSED_SHOWN = 300


class RefusedList(QWidget):
    """The first `REFUSED_SHOWN` refusals of an export, and how many more there are."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = QTableWidget(0, len(REFUSED_COLUMNS))
        self.table.setObjectName("refused_table")
        self.table.setHorizontalHeaderLabels(list(REFUSED_COLUMNS))
        self.table.setColumnWidth(0, 150)
        self.table.setColumnWidth(1, 260)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.more_label = QLabel()
        self.more_label.setObjectName("refused_more")
        self.more_label.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.more_label)

    def show_refused(self, refused: Sequence[Refusal], brain: Brain | None) -> None:
        """List `refused` (the first `REFUSED_SHOWN`), with first lines read from `brain`."""
        shown = refused[:REFUSED_SHOWN]
        lines = first_lines(brain, [item.id for item in shown])
        self.table.setRowCount(len(shown))
        for row, item in enumerate(shown):
            texts = (item.id, lines.get(item.id, ""), item.field, item.problem)
            for column, text in enumerate(texts):
                cell = QTableWidgetItem(text)
                cell.setToolTip(text)  # the id and the line are elided in their columns
                self.table.setItem(row, column, cell)
        more = len(refused) - len(shown)
        self.more_label.setText(
            f"… and {more:,} more ({len(refused):,} refused in all): "
            "Save refused list… writes every one."
        )
        self.more_label.setVisible(more > 0)


def first_lines(brain: Brain | None, ids: list[str]) -> dict[str, str]:
    """Each memory's first line, so the person knows which one a refusal names."""
    if not ids or brain is None:
        return {}
    try:
        traces = brain.get_many(ids)
    except MemguiError:
        return {}  # the list still names every id; the lines are a help only
    return {
        trace_id: next((ln.strip() for ln in trace.content.splitlines() if ln.strip()), "")
        for trace_id, trace in traces.items()
    }
