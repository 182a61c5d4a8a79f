"""What keeps the GUI thread free while jobs run: sliced id lists, the row map, paints
that are skipped or cheap, live refresh around this window's own import, worker priority."""

from __future__ import annotations

import os
import sys
import threading

import pytest
from PySide6.QtCore import QEvent, QObject, QRect, QSettings, Qt
from PySide6.QtGui import QPixmap, QRegion
from PySide6.QtWidgets import QAbstractItemView

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.ui import jobs
from memgui.ui.jobs import JobRunner
from memgui.ui.main_window import MainWindow
from memgui.ui.models import row_lists
from memgui.ui.models.row_lists import RowMap, gather_slices
from memgui.ui.models.trace_columns import COLUMNS, STRENGTH_COLUMN
from memgui.ui.models.trace_table_model import TraceTableModel
from memgui.ui.session import BrainSession
from memgui.ui.views.strength_bar import BAR_WIDTH, strength_bar
from memgui.ui.window import live_refresh
from tests.support.waiting import WAIT_MS, WAIT_S
from tests.support.window import wait_idle


@pytest.fixture
def big_brain(tmp_path):
    path = tmp_path / "big.sqlite"
    with Brain.open(path, actor="test") as brain:
        for n in range(60):
            kind = ("episodic", "semantic")[n % 2]
            brain.add(f"Memory {n:03d}", type=kind, category=("TODO", None, "PATTERN")[n % 3])
    return path


@pytest.mark.parametrize(
    ("flt", "order", "descending"),
    [
        (TraceFilter(), "created_at", True),
        (TraceFilter(type="semantic"), "category", False),
        (TraceFilter(deleted=True), "content", True),  # nothing in the trash
    ],
)
def test_id_slices_join_to_the_whole_list_in_its_order(big_brain, flt, order, descending):
    with Brain.open(big_brain, actor="test") as brain:
        whole = brain.list_ids(flt, order=order, descending=descending)
        slices = list(brain.list_id_slices(flt, order=order, descending=descending, size=7))
    assert [i for part in slices for i in part] == whole
    assert all(0 < len(part) <= 14 for part in slices)  # about `size` each
    assert len(slices) >= len(whole) // 14 and bool(slices) == bool(whole)


def test_id_slices_read_row_by_row_when_an_id_holds_the_separator(tmp_path):
    with Brain.open(tmp_path / "odd.sqlite", actor="test") as brain:
        plain = brain.add("plain").id
        odd = brain.add("odd", id="a\x1fb").id
        slices = list(brain.list_id_slices(size=1))
        assert [i for part in slices for i in part] == brain.list_ids()
    assert sorted(i for part in slices for i in part) == sorted([plain, odd])


def test_row_map_numbers_ids_across_slices(monkeypatch):
    monkeypatch.setattr(row_lists, "_BURST", 3)
    monkeypatch.setattr(row_lists, "_BURST_PAUSE_S", 0)
    ids, rows = gather_slices(iter([[f"t{i}" for i in range(5)], ["t5", "t6"], []]))
    assert ids == [f"t{i}" for i in range(7)]
    assert [rows.get(f"t{i}") for i in range(7)] == list(range(7))
    assert rows.get("missing") == -1 and len(rows) == 7


def test_a_discarded_row_map_hands_its_shards_to_the_worker(monkeypatch):
    monkeypatch.setattr(row_lists, "_BURST_PAUSE_S", 0)
    rows = RowMap()
    rows.add([f"t{i}" for i in range(300)], 0)
    assert rows.get("t299") == 299
    row_lists.discard_later(rows)
    assert rows.shards == [] and len(rows) == 0  # the window keeps nothing of it


def test_strength_is_a_bar_picture_drawn_by_qt(session):
    model = TraceTableModel(session.brain)
    model.refresh()
    index = model.index(0, STRENGTH_COLUMN)
    bar = index.data(Qt.ItemDataRole.DecorationRole)
    assert isinstance(bar, QPixmap) and bar.width() >= BAR_WIDTH
    assert model.index(0, 0).data(Qt.ItemDataRole.DecorationRole) is None  # only that column
    assert strength_bar(0.5).cacheKey() == strength_bar(0.501).cacheKey()  # one per hundredth
    assert strength_bar(0.5).cacheKey() != strength_bar(0.9).cacheKey()
    assert COLUMNS[STRENGTH_COLUMN].header == "Strength"


MARK = QRect(0, 0, 1, 1)


class PaintCounter(QObject):
    """The region of each paint of the widget it filters."""

    def __init__(self) -> None:
        super().__init__()
        self.regions: list[QRegion] = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.regions.append(QRegion(event.region()))
        return False

    def marks(self) -> list[bool]:
        """For each paint, whether it painted the one-pixel mark alone."""
        return [region == QRegion(MARK) for region in self.regions]


def paint_a_mark(qtbot, view: QAbstractItemView, counter: PaintCounter) -> None:
    """Paint one pixel of the view and wait for it: any paint asked before comes first or
    with it. (Qt paints what is due in a widget in one paint, so a repaint still due joins
    the mark's paint, which then covers more than the pixel.)"""
    view.executeDelayedItemsLayout()  # a layout Qt put off asks for its paint now
    painted = len(counter.regions)
    view.viewport().update(MARK)
    qtbot.waitUntil(lambda: len(counter.regions) > painted, timeout=WAIT_MS)


def test_rows_appended_below_a_full_table_update_the_scroll_bar_only(
    qtbot, tmp_path, big_brain, monkeypatch
):
    from memgui.ui.models import trace_table_model as ttm

    monkeypatch.setattr(ttm, "FIRST_PAGE", 20)
    # The full list waits until the first page is painted (else both may come before a paint).
    release = threading.Event()
    gather = ttm.gather_slices
    monkeypatch.setattr(
        ttm, "gather_slices", lambda slices: release.wait(WAIT_S) and gather(slices)
    )
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, live=False)
    qtbot.addWidget(window)
    window.resize(900, 400)  # fewer than 20 rows fit
    window.show()
    window.set_session(BrainSession.open(big_brain))
    release.set()
    wait_idle(qtbot, window)
    release.clear()
    table, model = window.table, window.model
    table.selectionModel().clear()
    counter = PaintCounter()
    table.viewport().installEventFilter(counter)
    with qtbot.waitSignal(model.modelReset, timeout=WAIT_MS):
        model.set_filter(TraceFilter(type="episodic"))  # a new list: its first page, then more
    qtbot.waitUntil(lambda: bool(counter.regions), timeout=WAIT_MS)
    paint_a_mark(qtbot, table, counter)
    assert model.rowCount() == 20 and counter.marks() == [False, True]  # painted once
    scroll_range = table.verticalScrollBar().maximum()
    release.set()
    qtbot.waitUntil(lambda: not model.busy, timeout=WAIT_MS)
    paint_a_mark(qtbot, table, counter)
    assert model.rowCount() == 30 and table.rowAt(table.viewport().height() - 1) < 20
    assert table.verticalScrollBar().maximum() > scroll_range  # room for the new rows…
    assert counter.marks() == [False, True, True]  # …and no repaint of the rows on screen
    table.scrollToBottom()  # the appended rows are there to scroll to
    qtbot.waitUntil(lambda: model.index(29, 0).data() is not None, timeout=WAIT_MS)
    assert table.rowAt(table.viewport().height() - 1) == 29


def test_live_refresh_waits_while_this_window_writes_elsewhere(qtbot, tmp_path, brain_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, live=True)
    qtbot.addWidget(window)
    window.set_session(BrainSession.open(brain_path))
    wait_idle(qtbot, window)
    session, watcher = window.session, window.watcher
    announced: list[str] = []
    watcher.external_changed.connect(lambda _changes, summary: announced.append(summary))
    with session.writing():
        # Committed on another connection, not announced (yet) as this window's batch.
        with Brain.open(brain_path, actor="import") as other:
            other.add("Written by this window's import")
        watcher.poll()
        assert announced == []  # not read while the write runs
    watcher.poll()  # once it is over, the rows are read (here: never announced as own)
    assert announced == ["import added 1 memory"]


def test_a_long_journal_is_read_a_page_at_a_time(qtbot, tmp_path, brain_path, monkeypatch):
    monkeypatch.setattr(live_refresh, "PAGE", 3)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, live=True)
    qtbot.addWidget(window)
    window.set_session(BrainSession.open(brain_path))
    wait_idle(qtbot, window)
    counted: list[int] = []
    window.watcher.external_changed.connect(lambda changes, _s: counted.append(len(changes.traces)))
    with Brain.open(brain_path, actor="cli") as other:
        for n in range(8):
            other.add(f"Outside {n}")
    window.watcher.poll()
    assert counted == [3]  # one page now…
    qtbot.waitUntil(lambda: sum(counted) == 8, timeout=WAIT_MS)  # …the rest soon after


def test_workers_run_nicer_than_the_window(qtbot):
    if sys.platform != "linux":
        pytest.skip("only Linux keeps a niceness per thread")

    def niceness():
        yield from ()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    runner = JobRunner()
    job = runner.start("niceness", niceness)
    with qtbot.waitSignal(job.finished, timeout=WAIT_MS) as finished:
        pass
    app_niceness = os.getpriority(os.PRIO_PROCESS, 0)
    assert finished.args[0] == min(19, app_niceness + jobs.WORKER_NICENESS)
    assert os.getpriority(os.PRIO_PROCESS, 0) == app_niceness  # the GUI thread is untouched
    runner.shutdown()


def test_a_job_started_not_nice_keeps_the_apps_priority_in_a_nice_runner(qtbot):
    if sys.platform != "linux":
        pytest.skip("only Linux keeps a niceness per thread")

    def niceness():
        yield from ()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    runner = JobRunner(max_threads=1)
    niced = runner.start("niced", niceness)  # the pool's one thread is niced for good…
    with qtbot.waitSignal(niced.finished, timeout=WAIT_MS):
        pass
    plain = runner.start("at the app's priority", niceness, nice=False)  # …so not on it
    with qtbot.waitSignal(plain.finished, timeout=WAIT_MS) as finished:
        pass
    assert finished.args[0] == os.getpriority(os.PRIO_PROCESS, 0)
    assert runner.shutdown()


def test_shutdown_waits_for_a_job_at_the_apps_priority(qtbot):
    entered, release = threading.Event(), threading.Event()
    left: list[str] = []

    def held():
        yield from ()
        entered.set()
        release.wait(WAIT_S)
        left.append("done")
        return None

    runner = JobRunner()
    runner.start("held", held, nice=False)
    qtbot.waitUntil(entered.is_set, timeout=WAIT_MS)
    cancel_all = runner.cancel_all
    runner.cancel_all = lambda: (cancel_all(), release.set())  # shutdown lets it go on
    assert runner.shutdown()
    assert left == ["done"]  # shutdown returned only once the job had left its generator


def test_the_import_window_plans_and_commits_at_the_apps_priority(qtbot, tmp_path):
    if sys.platform != "linux":
        pytest.skip("only Linux keeps a niceness per thread")
    from memgui.ui.importing import import_jobs

    seen: list[int] = []
    original = import_jobs.on_own_connection

    def recording(session, work, writes):
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return (yield from original(session, work, writes))

    import_jobs.on_own_connection = recording
    try:
        brain = tmp_path / "b.sqlite"
        Brain.open(brain).close()
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "one.md").write_text("# One\n\nA note.\n")
        runner = JobRunner()
        run = import_jobs.ImportRun(runner, BrainSession.open(brain), tmp_path / "notes")
        with qtbot.waitSignal(run.planned, timeout=WAIT_MS):
            run.start_plan()
        with qtbot.waitSignal(run.committed, timeout=WAIT_MS):
            run.start_commit()
        assert seen == [os.getpriority(os.PRIO_PROCESS, 0)] * 2
        assert runner.shutdown()
    finally:
        import_jobs.on_own_connection = original


def test_opening_a_brain_makes_no_ollama_client_on_the_gui_thread(qtbot, tmp_path, brain_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, live=False)
    qtbot.addWidget(window)
    semantic = window.semantic
    made_on: list[int] = []
    original = semantic.embedder_for

    def recording(config):
        made_on.append(threading.get_ident())
        return original(config)

    semantic.embedder_for = recording
    window.set_session(BrainSession.open(brain_path))
    qtbot.waitUntil(lambda: bool(made_on), timeout=WAIT_MS)  # the Ollama check made it…
    assert threading.get_ident() not in made_on  # …in a worker
    config = semantic.config
    assert semantic.embedder_for(config) is semantic.embedder_for(config)
    other = (config[0], config[1] + "-other")
    assert semantic.embedder_for(other).model == other[1]
    wait_idle(qtbot, window)
    window.runner.shutdown()


def test_a_delegate_reusing_its_roles_gets_no_value_of_the_cell_before(session):
    from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

    class Delegate(QStyledItemDelegate):  # initStyleOption is protected in C++
        pass

    model = TraceTableModel(session.brain)
    model.refresh()
    delegate = Delegate()
    bar_cell = QStyleOptionViewItem()
    delegate.initStyleOption(bar_cell, model.index(0, STRENGTH_COLUMN))
    assert not bar_cell.icon.isNull()
    assert bar_cell.displayAlignment & Qt.AlignmentFlag.AlignRight
    content_cell = QStyleOptionViewItem()
    delegate.initStyleOption(content_cell, model.index(0, 0))  # the same span, reused
    assert content_cell.icon.isNull()
    assert not content_cell.displayAlignment & Qt.AlignmentFlag.AlignRight
    assert content_cell.text == model.index(0, 0).data()


def test_a_refresh_reads_the_rows_on_screen_in_its_job(qtbot, big_brain, monkeypatch):
    from memgui.ui.models import trace_table_model as ttm

    monkeypatch.setattr(ttm, "PAGE_SIZE", 10)
    monkeypatch.setattr(ttm, "FIRST_PAGE", 5)
    session = BrainSession.open(big_brain)
    runner = JobRunner()
    model = TraceTableModel(session.brain, runner=runner, open_reader=session.open_reader)
    with qtbot.waitSignal(model.query_finished, timeout=WAIT_MS):
        model.refresh()
    assert model.index(40, 0).data()  # a paint far down: its page read here, on this thread
    assert 40 not in range(ttm.FIRST_PAGE) and model._fetched_from == 40 - 10 // 4
    reads_here: list[int] = []
    real_get_many = session.brain.get_many
    monkeypatch.setattr(
        session.brain, "get_many", lambda ids: reads_here.append(len(ids)) or real_get_many(ids)
    )
    with qtbot.waitSignal(model.query_finished, timeout=WAIT_MS):
        model.refresh()  # the same list again (an import elsewhere, say)
    assert [model.index(row, 0).data() for row in range(38, 45)]
    assert reads_here == []  # the job had read them
    runner.shutdown()
    model.close_readers()
    session.close()
