"""Render the main window for a brain to a PNG, offscreen (`memgui screenshot`).

Used for the docs and the tests. The window runs with its own throw-away settings (the
person's column choices and recent files are not read or changed) and without live refresh.
The brain is a file, or a shared brain's `postgresql://…?brain_id=…` address (its password
from PGPASSWORD or ~/.pgpass: nobody is asked).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget

from memgui.core.errors import NotFound
from memgui.core.shared_brain import SharedBrain, is_postgres_address
from memgui.ui.command_line import TABS
from memgui.ui.session import ACTOR, BrainSession

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

DEFAULT_SIZE = (1280, 800)
WAIT_S = 15.0
VIEWS = ("main", "graph", "open-shared")  # open-shared: File ▸ Open shared brain…'s dialog
SHARED_EXAMPLE = "postgresql://me@db.example:5432/memory?brain_id=team"


def settle(
    app: QApplication, until: Callable[[], object] | None = None, timeout_s: float = WAIT_S
) -> None:
    """Run the event loop until `until()` holds (or, without one, for `timeout_s`)."""
    deadline = time.monotonic() + timeout_s
    while True:
        app.processEvents()
        if (until is not None and until()) or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    app.processEvents()


def brain_place(brain: str | Path) -> str | Path:
    """A shared brain's address as it is, else the brain file, which must be there."""
    if isinstance(brain, str) and is_postgres_address(brain):
        return brain
    path = Path(brain).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"no brain at {path}")
    return path


def _session(place: str | Path) -> BrainSession:
    if isinstance(place, str):
        return BrainSession.of_shared(SharedBrain.open(place, actor=ACTOR))
    return BrainSession.open(place)


@contextmanager
def offscreen_window(path: str | Path) -> Iterator[tuple[QApplication, MainWindow]]:
    """A main window on `path` (a file, or a shared brain's address: `brain_place`) with
    throw-away settings and no live refresh, closed after."""
    if QApplication.instance() is None and not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from memgui.ui.app import application
    from memgui.ui.main_window import MainWindow

    app = application()
    with tempfile.TemporaryDirectory(prefix="memgui-shot-") as scratch:
        settings = QSettings(str(Path(scratch) / "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(settings=settings, live=False)
        try:
            window.set_session(_session(path))
            yield app, window
        finally:
            window.runner.shutdown()
            # The jobs' last signals are queued to this thread: delivered, no job counts as
            # running, and closing does not stop to ask (a modal box nobody can answer).
            app.processEvents()
            window.close()
            window.deleteLater()
            app.processEvents()


def show_activity(app: QApplication, window: MainWindow) -> None:
    """Open the Agent activity panel, every group expanded, its first edit chosen (it
    shows a before and an after), else its first change."""
    service = window.activity
    service.toggle_action.trigger()
    settle(app, lambda: not service.counting)
    panel, model = service.panel, service.model
    if model is None or not model.rowCount():
        return
    panel.tree.expandAll()
    settle(app, timeout_s=0.2)
    changes = []
    for group in range(model.rowCount()):
        for row in range(model.rowCount(model.index(group, 0))):
            batch = model.index(row, 0, model.index(group, 0))
            kids = [model.index(k, 0, batch) for k in range(model.rowCount(batch))]
            changes += kids or [batch]
    edits = [i for i in changes if (entry := model.entry_of(i)) and entry.op == "update"]
    panel.select((edits or changes)[0])


def save_png(widget: QWidget, out_png: str | Path) -> None:
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not widget.grab().save(str(out), "PNG"):
        raise OSError(f"could not write {out}")


def render(
    brain_path: str,
    out_png: str,
    select_id: str | None = None,
    size: tuple[int, int] = DEFAULT_SIZE,
    *,
    search: str = "",
    tab: str | None = None,
    trash: bool = False,
    activity: bool = False,
    view: str = "main",
    depth: int = 1,
) -> None:
    """Write a PNG of the window showing `brain_path` (`select_id` selected, if given).

    `search`, `tab` (one of TABS), `trash` and `activity` (the Agent activity panel open,
    its first change chosen) set up other states for the docs; `view` "graph" draws the
    graph window opened on `select_id` (else on the first memory), `depth` hops around it;
    "open-shared" File ▸ Open shared brain…'s dialog alone, at `size`, an address filled in.
    """
    if view not in VIEWS:
        raise ValueError(f"view must be one of {', '.join(VIEWS)} (got {view!r})")
    path = brain_place(brain_path)
    if tab is not None and tab not in TABS:
        raise ValueError(f"tab must be one of {', '.join(TABS)} (got {tab!r})")
    width, height = size
    if not (200 <= width <= 10_000 and 200 <= height <= 10_000):
        raise ValueError(f"size must be between 200x200 and 10000x10000 (got {width}x{height})")
    with offscreen_window(path) as (app, window):
        window.resize(width, height)
        window.show()
        settle(app, lambda: window.model is not None and not window.model.busy)
        model = window.model
        if model is None:
            raise RuntimeError(window.statusBar().currentMessage() or f"{path} did not open")
        if trash:
            window.filter_bar.trash_check.setChecked(True)
            settle(app, lambda: not model.busy)
        if search:
            window.search_bar.set_query(search)
            settle(app, lambda: not model.busy)
        if select_id is not None and not window.select_id(select_id):
            raise NotFound(select_id)
        first = model.id_at(0)
        if select_id is None and first is not None and (tab or search):
            window.select_id(first)
        if tab is not None:
            window.detail.setCurrentIndex(TABS.index(tab))
        if view == "graph":
            _save_graph(app, window, select_id or window.current_id(), size, depth, out_png)
            return
        if view == "open-shared":
            from memgui.ui.dialogs.shared_brain_dialog import SharedBrainDialog

            dialog = SharedBrainDialog(window.settings, window)
            dialog.set_address(SHARED_EXAMPLE)
            dialog.resize(width, height)
            dialog.show()
            settle(app, timeout_s=0.2)
            save_png(dialog, out_png)
            dialog.close()
            return
        if activity:
            show_activity(app, window)
        settle(app, timeout_s=0.2)
        save_png(window, out_png)


def _save_graph(
    app: QApplication,
    window: MainWindow,
    trace_id: str | None,
    size: tuple[int, int],
    depth: int,
    out_png: str | Path,
) -> None:
    if trace_id is None and window.model is not None and window.model.rowCount():
        trace_id = window.model.id_at(0)
    if trace_id is None:
        raise NotFound("(no memory to open the graph on)")
    window.graph.depth = depth
    graph = window.graph.open(trace_id)
    if graph is None:
        raise NotFound(trace_id)
    graph.resize(*size)
    settle(app, lambda: bool(graph.scene.nodes) and not graph.controller.busy)
    graph.canvas.fit()
    settle(app, timeout_s=0.2)
    save_png(graph, out_png)
