"""Render the Consolidate… dialog to a PNG (`memgui screenshot … --consolidate`).

The window opens the brain with throw-away settings and no live refresh, plans a
consolidation as Edit ▸ Consolidate… does, and draws the dialog once the plan is ready,
its first merge cluster (else its first candidate) chosen. Nothing is applied: a plan
writes nothing. The brain is a file or a shared brain's address.
"""

from __future__ import annotations

from pathlib import Path

from memgui.ui.consolidation.consolidation_dialog import ConsolidateDialog
from memgui.ui.consolidation.consolidation_model import Role
from memgui.ui.screenshot import brain_place, offscreen_window, save_png, settle

DEFAULT_SIZE = (1180, 700)
WAIT_S = 120.0  # a chat model asked for insights may take its time


def render_consolidation(
    brain_path: str | Path, out_png: str | Path, size: tuple[int, int] = DEFAULT_SIZE
) -> dict[str, int]:
    """Write a PNG of the dialog with its plan for `brain_path`; returns the plan's counts."""
    path = brain_place(brain_path)
    with offscreen_window(path) as (app, window):
        dialog = ConsolidateDialog(window)
        dialog.resize(*size)
        dialog.show()
        settle(app, lambda: not dialog.run.running, WAIT_S)
        if dialog.run.plan is None:
            raise RuntimeError(dialog.status.text() or "the plan did not finish")
        choose_first(dialog)
        settle(app, None, 0.3)
        save_png(dialog, out_png)
        counts = dialog.run.plan.counts
        dialog.close()
        return counts


def choose_first(dialog: ConsolidateDialog) -> None:
    """Expand the merge clusters and choose the first (else the first candidate)."""
    model, tree = dialog.model, dialog.tree
    clusters, others = [], []
    for step_row in range(model.rowCount()):
        step = model.index(step_row, 0)
        for row in range(model.rowCount(step)):
            index = model.index(row, 0, step)
            if model.rowCount(index):
                tree.expand(index)
                clusters.append(index)
            elif index.data(Role.Candidate) is not None:
                others.append(index)
    chosen = (clusters or others)[:1]
    if chosen:
        tree.setCurrentIndex(chosen[0])
