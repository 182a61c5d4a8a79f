"""The "why this result" line under the search field, for a cognitive search.

A cognitive search ranks by AgentOS's composite score; the core spells each result's score
out part by part. The line shows it for the memory the table points at (the content's
tooltip shows it too), and goes away in every other list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow


def install_why_line(window: MainWindow) -> None:
    def update(*_args: object) -> None:
        model, index = window.model, window.table.currentIndex()
        why = model.why_of(model.id_at(index.row())) if model and index.isValid() else None
        window.search_bar.show_why(why)

    def attach() -> None:
        if window.model is not None and window.table.selectionModel() is not None:
            window.table.selectionModel().currentRowChanged.connect(update)
            window.model.query_finished.connect(update)
        update()

    window.session_changed.connect(attach)
