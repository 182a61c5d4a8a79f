"""The trace table model against a real brain file."""

from __future__ import annotations

from PySide6.QtCore import Qt

from memgui.core.model import Changes, TraceFilter, changes_of
from memgui.ui.models import row_lists
from memgui.ui.models import trace_table_model as ttm
from memgui.ui.models.trace_columns import COLUMNS, TraceRole, first_line
from memgui.ui.models.trace_table_model import TraceTableModel
from tests.support.brains import fill
from tests.support.waiting import WAIT_MS, WAIT_S


def column(name: str) -> int:
    return [c.header for c in COLUMNS].index(name)


def test_model_passes_qt_model_tester(session, qtmodeltester):
    model = TraceTableModel(session.brain)
    model.refresh()
    assert model.rowCount() == 5
    qtmodeltester.check(model)


def test_rows_show_first_line_and_roles(session):
    model = TraceTableModel(session.brain)
    model.refresh()
    contents = [model.index(r, 0).data() for r in range(model.rowCount())]
    assert "Deploys run on Fridays…" in contents  # a second line is marked, not shown
    row = contents.index("Deploys run on Fridays…")
    trace = model.index(row, 0).data(TraceRole.TRACE)
    assert trace.tags == ("deploy", "ops")
    assert model.index(row, column("Tags")).data() == "deploy, ops"
    assert model.index(row, 0).data(TraceRole.TRACE_ID) == trace.id
    assert 0.99 < model.index(row, column("Strength")).data(TraceRole.STRENGTH) <= 1.0
    assert model.index(row, column("Version")).data() == "1"
    assert int(TraceRole.TRACE_ID) == int(Qt.ItemDataRole.UserRole) + 1


def test_first_line_elides_long_text():
    assert first_line("x" * 500, limit=10) == "x" * 9 + "…"
    assert first_line("\n\n  second  ") == "second"


def test_filter_and_sort_rerun_the_query(session):
    model = TraceTableModel(session.brain)
    model.refresh()
    model.set_filter(TraceFilter(scope_id="u1"))
    assert model.rowCount() == 2
    model.sort(column("Content"), Qt.SortOrder.AscendingOrder)
    assert [model.index(r, 0).data() for r in range(2)] == [
        "Call Bob about the invoice",
        "The build uses Python 3.11",
    ]
    assert model.query.order == "content" and not model.query.descending
    model.set_filter(TraceFilter(tag="ops"))
    assert model.rowCount() == 1


def test_search_does_not_count_as_recall(session):
    model = TraceTableModel(session.brain)
    model.set_search("invoice")
    assert model.rowCount() == 1
    assert model.search_mode in ("keyword", "hybrid")
    trace = session.brain.get(model.id_at(0))
    assert trace.retrieval_count == 0 and trace.last_accessed is None


def test_bad_query_reports_the_core_message(session, qtbot):
    model = TraceTableModel(session.brain)
    model.refresh()
    with qtbot.waitSignal(model.query_failed, timeout=WAIT_MS) as failed:
        model.set_filter(TraceFilter(type="nonsense"))
    assert "type" in failed.args[0] and "nonsense" in failed.args[0]
    assert model.rowCount() == 5  # the last good answer stays on screen


def test_rows_are_fetched_in_pages(brain_path, qapp, monkeypatch):
    from memgui.core.brain import Brain

    with Brain.open(brain_path, actor="test") as brain:
        fill(brain, extra=30)
        monkeypatch.setattr(ttm, "PAGE_SIZE", 10)
        asked: list[int] = []
        real_get_many = brain.get_many
        monkeypatch.setattr(
            brain, "get_many", lambda ids: asked.append(len(ids)) or real_get_many(ids)
        )
        model = TraceTableModel(brain)
        model.refresh()
        assert model.rowCount() == 40 and asked == []
        model.index(25, 0).data()
        model.index(26, 3).data()
        assert asked == [10]  # one page for both rows, then the cache
        model.index(5, 0).data()
        assert asked == [10, 10]


def test_changes_refresh_rows_and_requery(session, qtbot):
    model = TraceTableModel(session.brain)
    model.refresh()
    session.bus.changed.connect(model.apply_changes)
    row = 0
    trace = model.trace_at(row)
    brain = session.brain
    # Whoever changes the brain publishes what the core call returned.
    with qtbot.waitSignal(model.dataChanged, timeout=WAIT_MS):
        edited = brain.update(trace.id, {"content": "Edited elsewhere"}, trace.version)
        session.publish(changes_of(edited))
    assert model.index(row, 0).data() == "Edited elsewhere"
    with qtbot.waitSignal(model.modelReset, timeout=WAIT_MS):
        session.publish(changes_of(brain.add("A brand new memory")))
    assert model.rowCount() == 6
    with qtbot.waitSignal(model.modelReset, timeout=WAIT_MS):
        session.publish(changes_of(brain.forget(trace.id)))
    assert model.row_of(trace.id) == -1 and model.rowCount() == 5
    model.apply_changes(Changes(kind="edit"))  # nothing named: nothing happens
    assert model.rowCount() == 5


def test_a_new_list_resets_once_then_inserts_the_rest(session, qtbot, monkeypatch):
    from memgui.ui.jobs import JobRunner

    monkeypatch.setattr(ttm, "FIRST_PAGE", 2)
    opened: list = []

    def open_reader():
        opened.append(session.open_reader())
        return opened[-1]

    runner = JobRunner()
    model = TraceTableModel(session.brain, runner=runner, open_reader=open_reader)
    resets, inserts = [], []
    model.modelReset.connect(lambda: resets.append(model.rowCount()))
    model.rowsInserted.connect(lambda _parent, first, last: inserts.append((first, last)))
    with qtbot.waitSignal(model.query_finished, timeout=WAIT_MS):
        model.refresh()
    assert resets == [2] and inserts == [(2, 4)]  # the first page, then the other rows
    assert model.rowCount() == 5 and not model.busy
    last = model.id_at(4)
    assert model.row_of(last) == 4 and model.index(4, 0).data()
    with qtbot.waitSignal(model.query_finished, timeout=WAIT_MS):
        model.set_filter(TraceFilter(scope_id="u1"))
    assert resets == [2, 2] and model.rowCount() == 2
    assert len(opened) == 1  # the second query reused the first one's reader
    runner.shutdown()
    model.close_readers()
    with qtbot.waitSignal(model.query_finished, timeout=WAIT_MS):
        model.refresh()  # a reader taken after closing is closed after its job
    assert len(opened) == 2 and model._readers.idle == []


def test_row_map_numbers_every_id_in_slices(monkeypatch):
    monkeypatch.setattr(row_lists, "_SLICE", 3)
    ids = [f"t{i}" for i in range(10)]
    assert row_lists.row_map(ids) == {f"t{i}": i for i in range(10)}
    assert row_lists.row_map([]) == {}


def test_discarded_containers_still_held_elsewhere_stay_whole(monkeypatch):
    monkeypatch.setattr(row_lists, "_PAUSE_S", 0)
    monkeypatch.setattr(row_lists, "_HOLDER_PAUSE_S", 0.001)
    kept = list(range(50))
    table = {n: n for n in range(50)}
    row_lists.discard_later(kept, table, [])
    # The worker looks a while for the other holders to let go, then leaves them their own.
    assert row_lists.wait_discarded(WAIT_S)
    assert kept == list(range(50)) and len(table) == 50


def test_a_discarded_container_held_nowhere_else_is_emptied(monkeypatch):
    monkeypatch.setattr(row_lists, "_PAUSE_S", 0)
    seen: list[int] = []

    class Watched(list):
        def __del__(self) -> None:
            seen.append(len(self))  # how much was left in it when it went

    row_lists.discard_later(Watched(range(50)))
    assert row_lists.wait_discarded(WAIT_S)
    assert seen == [0]


def test_search_results_sorted_in_memory_map_ids_to_the_rows_shown(qtbot, tmp_path, brain_path):
    from tests.support.window import open_window, wait_idle

    window = open_window(qtbot, tmp_path, brain_path)
    for text in ("build alpha", "delta build build build", "build beta", "zeta build"):
        window.session.brain.add(text)
    model = window.model
    for _run in range(2):  # the search, then F5
        window.search_bar.set_query("build")
        wait_idle(qtbot, window)
        window.model.refresh()
        wait_idle(qtbot, window)
        rows = model.rowCount()
        assert rows >= 4
        assert [model.row_of(model.id_at(r)) for r in range(rows)] == list(range(rows))
    picked = model.id_at(2)
    assert window.select_id(picked) and window.current_id() == picked
    window.close()
