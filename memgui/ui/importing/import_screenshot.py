"""Render the review page of an import to a PNG (`memgui screenshot … --import PATH`).

The window opens the brain with throw-away settings and no live refresh, plans the import
exactly as a drop would (in the background job; on a shared brain against a staged file of
it), and draws the import window once the plan is ready. Nothing is committed: a plan
writes nothing. `show` picks the record selected in
the table so its detail is drawn too: the first record of that verdict (by default the
first duplicate, else refused, else new record).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QAbstractItemView

from memgui.core.io import Verdict
from memgui.ui.screenshot import brain_place, offscreen_window, save_png, settle

if TYPE_CHECKING:
    from memgui.ui.importing.import_review import ImportReviewPage

DEFAULT_SIZE = (1180, 760)
WAIT_S = 60.0
PREFERRED = (Verdict.DUPLICATE, Verdict.REFUSED, Verdict.NEW)


def render_import(
    brain_path: str | Path,
    out_png: str | Path,
    source: str | Path,
    size: tuple[int, int] = DEFAULT_SIZE,
    show: str | None = None,
) -> dict[str, int]:
    """Write a PNG of the review page for importing `source`; returns the plan's counts."""
    path = brain_place(brain_path)  # a file, or a shared brain's address
    source = Path(source).expanduser()
    if not source.exists():
        raise FileNotFoundError(f"nothing to import at {source}")
    with offscreen_window(path) as (app, window):
        dialog = window.import_export.import_path(source)
        if dialog is None:
            raise RuntimeError(window.statusBar().currentMessage() or "cannot import")
        dialog.resize(*size)
        # The plan's end as the window hears it (its job is done a moment before).
        heard: list[object] = []
        for signal in (dialog.run.planned, dialog.run.failed, dialog.run.cancelled):
            signal.connect(heard.append)
        settle(app, lambda: bool(heard), WAIT_S)
        if dialog.run.plan is None:
            raise RuntimeError(dialog.working.message.text() or "the plan did not finish")
        _select(dialog.review, show)
        settle(app, None, 0.3)
        save_png(dialog, out_png)
        counts = dialog.run.plan.counts
        dialog.close()
        return counts


def _select(review: ImportReviewPage, verdict: str | None) -> None:
    plan = review.model.plan
    if plan is None:
        return
    wanted = (verdict,) if verdict else PREFERRED
    for choice in wanted:
        row = next((i for i, r in enumerate(plan.records) if r.verdict == choice), -1)
        if row < 0:
            continue
        index = review.proxy.mapFromSource(review.model.index(row, 0))
        review.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        review.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        return
