"""The open app runs the servers' upkeep: the TTL sweep at start and on an interval, on a
thread of its own, so expired memories leave the table without `memgui sweep`."""

from __future__ import annotations

import logging
import threading

from memgui.core.brain import Brain
from memgui.ui.dialogs.settings_dialog import URL_KEY
from memgui.ui.semantic.backfill import DEFAULT_INTERVAL_S, INTERVAL_KEY
from tests.support.servers import DEAD_OLLAMA
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window


def contents(window) -> list[str]:
    return [window.model.index(r, 0).data() for r in range(window.model.rowCount())]


def test_a_memory_expired_before_the_window_opened_goes_at_the_first_round(qtbot, tmp_path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.clock = lambda: 1_000  # long ago: its TTL has passed by now
        brain.add("A reminder for long ago", ttl_secs=60)
        brain.clock = Brain(brain.db, brain.brain_id, "gui").clock
        brain.add("Kept")
    # A round an hour away: only the first, at start, can remove it.
    window = open_window(
        qtbot, tmp_path, path, live=True, **{URL_KEY: DEAD_OLLAMA, INTERVAL_KEY: 3600}
    )
    try:
        qtbot.waitUntil(lambda: contents(window) == ["Kept"], timeout=WAIT_MS)
        entries = window.session.brain.journal_since(0)
        assert [(e.op, e.actor) for e in entries if e.op == "expire"] == [("expire", "sweep")]
        # The sweep is another actor's change: it waits for review, and can be reverted.
        qtbot.waitUntil(lambda: window.activity.count == 1, timeout=WAIT_MS)
    finally:
        window.close()


def test_a_memory_that_expires_while_the_window_is_open_leaves_at_a_later_round(
    qtbot, tmp_path
) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.add("Kept")
    window = open_window(
        qtbot, tmp_path, path, live=False, **{URL_KEY: DEAD_OLLAMA, INTERVAL_KEY: 0.2}
    )
    try:
        upkeep = window.semantic.upkeep
        assert upkeep is not None and upkeep.interval == 0.2
        window.session.brain.add("Gone in a second", ttl_secs=1)
        window.model.refresh()
        qtbot.waitUntil(lambda: "Gone in a second" in contents(window), timeout=WAIT_MS)
        # No live watcher here: the upkeep's report itself tells the table.
        qtbot.waitUntil(lambda: contents(window) == ["Kept"], timeout=WAIT_MS)
    finally:
        window.close()


def test_a_failing_round_is_logged_and_retried_and_the_window_goes_on(
    qtbot, tmp_path, caplog
) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.clock = lambda: 1_000
        brain.add("Expired long ago", ttl_secs=60)
        brain.clock = Brain(brain.db, brain.brain_id, "gui").clock
        brain.add("Kept")
        # Another program's trigger refuses every delete: each sweep fails.
        brain.db.conn.execute(
            "CREATE TRIGGER keep_all BEFORE DELETE ON memory_traces "
            "BEGIN SELECT RAISE(ABORT, 'deletes are not allowed here'); END"
        )
    caplog.set_level(logging.WARNING, logger="memgui.maintenance")
    window = open_window(
        qtbot, tmp_path, path, live=False, **{URL_KEY: DEAD_OLLAMA, INTERVAL_KEY: 0.2}
    )
    try:
        upkeep = window.semantic.upkeep
        assert upkeep is not None
        qtbot.waitUntil(lambda: upkeep.ticks >= 2, timeout=WAIT_MS)  # failed, tried again
        assert "sweep expired memories failed" in caplog.text
        assert sorted(contents(window)) == ["Expired long ago", "Kept"]  # the window goes on
        with Brain.open(path, actor="gui", create=False) as brain:
            brain.db.conn.execute("DROP TRIGGER keep_all")
        qtbot.waitUntil(lambda: contents(window) == ["Kept"], timeout=WAIT_MS)
        assert upkeep.running
    finally:
        window.close()


def test_the_interval_setting_is_read_with_care(qtbot, tmp_path) -> None:
    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.add("Kept")
    window = open_window(qtbot, tmp_path, path, **{URL_KEY: DEAD_OLLAMA, INTERVAL_KEY: "soon"})
    try:
        assert window.semantic.interval_s() == DEFAULT_INTERVAL_S
        window.settings.setValue(INTERVAL_KEY, -5)
        assert window.semantic.interval_s() == DEFAULT_INTERVAL_S
    finally:
        window.close()


def test_the_windows_writes_never_index_and_the_upkeep_indexes_them(
    qtbot, tmp_path, monkeypatch
) -> None:
    from memgui.core.search import fulltext
    from memgui.ui.commands import NewTraceCommand, SaveTraceCommand, push

    path = tmp_path / "brain.sqlite"
    with Brain.open(path, actor="gui") as brain:
        brain.add("Kept")
    threads: list[str] = []  # the thread of every batch indexed
    index_rows = fulltext._index_rows

    def counted(db, rows, agentos) -> None:
        threads.append(threading.current_thread().name)
        index_rows(db, rows, agentos)

    monkeypatch.setattr(fulltext, "_index_rows", counted)
    window = open_window(qtbot, tmp_path, path, **{URL_KEY: DEAD_OLLAMA, INTERVAL_KEY: 3600})
    try:
        session = window.session
        assert window.semantic.upkeep is not None and session.brain.indexes_later
        count = 3 * fulltext.FLUSH_AFTER + 5
        fields = [{"content": f"puffin {i}"} for i in range(count)]
        made = [push(session, NewTraceCommand(session, f)) for f in fields]
        push(session, SaveTraceCommand(session, made[0].id, {"content": "gannet"}, made[0].version))
        # Searched on the GUI thread, whether indexed yet or not: found, without a flush.
        found = session.brain.search("puffin", limit=200, record_recall=False).traces
        assert {t.id for t in found} == {t.id for t in made[1:]}
        qtbot.waitUntil(lambda: not fulltext.has_pending(session.brain.db), timeout=WAIT_MS)
        assert [t.id for t in session.brain.search("gannet").traces] == [made[0].id]
        assert threads and set(threads) == {"memgui-app-upkeep"}  # never the GUI thread
    finally:
        window.close()
