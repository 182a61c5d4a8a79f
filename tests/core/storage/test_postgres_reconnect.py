"""A shared brain after the server dropped its connection (`pg_terminate_backend`, as a
server restart or a network cut ends it), on a real server: the next call reconnects and
succeeds, or says the server is unreachable and succeeds once it is back; no write is lost,
made twice or half-applied; a pool replaces its dropped connections; the change listener
listens again and says that it missed what changed meanwhile."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import psycopg
import pytest

from memgui.core.errors import BrainDeadlocked, PostgresUnavailable
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_pool import SharedBrainPool
from memgui.core.storage import postgres_locks
from memgui.core.storage.engine import parse_postgres_address
from memgui.core.storage.postgres_notify import ChangeListener, ChangeNotice
from tests.support.pg_proxy import CommitCutter
from tests.support.postgres import PostgresServer, until_waiting_for_lock
from tests.support.waiting import WAIT_S

pytestmark = pytest.mark.slow  # a real server


def database(address: str) -> str:
    return urlsplit(address).path.lstrip("/")


def drop(server: PostgresServer, address: str, where: str = "TRUE") -> int:
    """End the server processes of the brain's database that match `where`, as a restart
    does; how many."""
    with psycopg.connect(server.uri, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = %s AND pid != pg_backend_pid() AND ({where})",
            (database(address),),
        ).fetchall()
    return len(rows)


@contextmanager
def server_away(server: PostgresServer, address: str) -> Iterator[None]:
    """No new connection to the brain's database, and every one it had dropped, until the
    block ends (the server is down, as far as the brain can tell)."""
    name = database(address)
    with psycopg.connect(server.uri, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS false")
        try:
            drop(server, address)
            yield
        finally:
            admin.execute(f"ALTER DATABASE {name} ALLOW_CONNECTIONS true")


def test_the_next_call_reconnects_and_each_write_lands_once(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        first = brain.add("before the restart")
        old_pid = brain.backend_pid
        assert drop(pg_server, pg_address, f"pid = {old_pid}") == 1
        assert brain.get(first.id).content == "before the restart"  # a read: reconnected
        assert brain.backend_pid != old_pid
        drop(pg_server, pg_address, f"pid = {brain.backend_pid}")
        updated = brain.update(first.id, {"content": "after"}, expect_version=1)
        assert updated.version == 2  # made once, on the new connection
        drop(pg_server, pg_address, f"pid = {brain.backend_pid}")
        second = brain.add("added on a dropped connection")
        assert [e.op for e in brain.history(first.id)] == ["add", "update"]
        assert [e.op for e in brain.history(second.id)] == ["add"]
        assert brain.count() == 2


def test_while_the_server_is_away_calls_say_so_then_succeed(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        brain.add("one")
        with server_away(pg_server, pg_address):
            with pytest.raises(PostgresUnavailable, match="cannot reach the PostgreSQL brain"):
                brain.add("two")
            with pytest.raises(PostgresUnavailable, match="cannot reach the PostgreSQL brain"):
                brain.count()
        assert brain.count() == 1  # back: nothing of the refused write landed
        brain.add("two")
        assert sorted(t.content for t in brain.list_traces()) == ["one", "two"]


def test_a_batch_cut_before_its_commit_writes_nothing_and_says_so(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        kept = brain.add("kept")
        lost = pytest.raises(PostgresUnavailable, match="was lost .*nothing was written")
        with lost, brain.batch():
            brain.add("in the batch")
            brain.update(kept.id, {"content": "changed in the batch"})
            drop(pg_server, pg_address, f"pid = {brain.backend_pid}")
        assert [t.content for t in brain.list_traces()] == ["kept"]  # reconnected: as it was
        assert [e.op for e in brain.history(kept.id)] == ["add"]
        with brain.batch():  # and the next batch is written
            brain.add("next batch")
        assert brain.count() == 2


def test_a_pool_replaces_connections_the_server_dropped(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with SharedBrainPool(pg_address, actor="test", min_size=2, max_size=2) as pool:
        with pool.brain() as brain:
            trace = brain.add("pooled")
        assert drop(pg_server, pg_address, "application_name LIKE 'memgui pool%%'") >= 1
        for _ in range(3):  # each lent one checked, or replaced by the brain when found cut
            with pool.brain() as brain:
                assert brain.get(trace.id).content == "pooled"
        with pool.brain() as brain:
            drop(pg_server, pg_address, f"pid = {brain.backend_pid}")  # during a loan
            brain.add("written on the pool's next connection")
        with pool.brain() as brain:
            assert brain.count() == 2
        assert pool.stats().get("pool_size", 0) <= 2  # the broken ones were not kept
    # A pool of one: the cut connection goes back first, or the loan waits for itself.
    with (
        SharedBrainPool(pg_address, actor="test", min_size=1, max_size=1) as alone,
        alone.brain() as brain,
    ):
        drop(pg_server, pg_address, f"pid = {brain.backend_pid}")
        assert brain.count() == 2


def test_a_write_that_lost_a_deadlock_is_made_again(
    pg_server: PostgresServer, pg_address: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An update takes the journal lock after locking its row; a transaction that holds
    the journal lock and then wants that row (as a merge or a revert does) deadlocks with
    it. The server ends one of the two; the update lands once either way."""
    caplog.set_level(logging.WARNING, logger="memgui.postgres.reconnect")
    with psycopg.connect(pg_server.uri, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database(pg_address)} SET deadlock_timeout = '50ms'")
    address = parse_postgres_address(pg_address)
    with SharedBrain.open(pg_address, actor="test") as brain:
        trace = brain.add("contended")
        outcome: queue.Queue[object] = queue.Queue()
        with psycopg.connect(address.conninfo, autocommit=True) as other:
            other.execute("BEGIN")
            other.execute(
                "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                (postgres_locks.JOURNAL_ORDER_CLASS, f"memgui_journal:{address.brain_id}"),
            )

            def update() -> None:
                try:
                    outcome.put(brain.update(trace.id, {"content": "updated"}, expect_version=1))
                except BaseException as exc:
                    outcome.put(exc)

            writer = threading.Thread(target=update)
            writer.start()
            until_waiting_for_lock(other, brain.backend_pid)  # row locked, waiting for the journal
            try:
                other.execute(
                    "SELECT 1 FROM memory_traces WHERE brain_id = %s AND id = %s FOR UPDATE",
                    (address.brain_id, trace.id),
                )
                other.execute("COMMIT")  # the update was the one ended: it runs again now
                ended = "the update"
            except psycopg.errors.DeadlockDetected:
                other.execute("ROLLBACK")  # this one was: the update goes on
                ended = "the other"
            writer.join(WAIT_S)
        updated = outcome.get(timeout=WAIT_S)
        assert not isinstance(updated, BaseException), updated
        assert brain.get(trace.id).version == 2
        assert [e.op for e in brain.history(trace.id)] == ["add", "update"]
        made_again = [r for r in caplog.records if "deadlock detected" in r.getMessage()]
        # The update ended is made again. The other ended may still follow a first round the
        # update lost: its second try can lock the row before the other's wait for it ends.
        assert made_again or ended == "the other"


def test_a_batch_that_lost_a_deadlock_says_so_and_writes_nothing(
    pg_server: PostgresServer, pg_address: str
) -> None:
    """A batch takes the journal lock first; an update holding a row it then wants waits
    for that lock: a deadlock. The batch is not made again (its caller's calls are gone
    with it): if the server ends it, it says so, nothing of it written."""
    with psycopg.connect(pg_server.uri, autocommit=True) as admin:
        admin.execute(f"ALTER DATABASE {database(pg_address)} SET deadlock_timeout = '50ms'")
    with (
        SharedBrain.open(pg_address, actor="app") as brain,
        SharedBrain.open(pg_address, actor="agent") as agent,
        psycopg.connect(parse_postgres_address(pg_address).conninfo, autocommit=True) as looker,
    ):
        trace = brain.add("contended")
        agent.add("the agent's first write")  # its brain is marked: its updates go late
        outcome: queue.Queue[object] = queue.Queue()

        def update() -> None:
            try:
                outcome.put(agent.update(trace.id, {"content": "by the agent"}))
            except BaseException as exc:
                outcome.put(exc)

        writer = threading.Thread(target=update)
        try:
            with brain.batch():
                brain.add("in the batch")
                writer.start()
                until_waiting_for_lock(looker, agent.backend_pid)  # the row held, the lock awaited
                brain.update(trace.id, {"content": "by the batch"})
            ended = "the agent's update"
        except BrainDeadlocked as refused:
            assert "nothing was written (try again)" in str(refused)
            ended = "the batch"
        writer.join(WAIT_S)
        assert not isinstance(outcome.get(timeout=WAIT_S), BaseException)
        contents = sorted(t.content for t in brain.list_traces())
        if ended == "the batch":
            assert contents == ["by the agent", "the agent's first write"]
        else:  # the agent's update made again after the batch
            assert contents == ["by the agent", "in the batch", "the agent's first write"]


def _listen(address: str, **options: object) -> tuple[ChangeListener, queue.Queue[object]]:
    heard: queue.Queue[object] = queue.Queue()
    listener = ChangeListener(
        parse_postgres_address(address),
        heard.put,
        on_error=heard.put,
        **options,  # type: ignore[arg-type]
    ).start()
    return listener, heard


def test_the_listener_listens_again_and_says_it_missed_changes(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with (
        SharedBrain.open(pg_address, actor="app") as mine,
        SharedBrain.open(pg_address, actor="other") as other,
    ):
        mine.add("makes the layout")
        listener, heard = _listen(pg_address, ignore_pid=mine.backend_pid)
        try:
            assert drop(pg_server, pg_address, "query LIKE 'LISTEN %%'") == 1
            assert heard.get(timeout=WAIT_S) == ChangeNotice(None, 0)  # read all again
            assert listener.reconnected == 1 and listener.error is None
            drop(pg_server, pg_address, f"pid = {mine.backend_pid}")
            mine.add("the app's own write, on its new connection")
            theirs = other.add("another program's write")
            got = heard.get(timeout=WAIT_S)
            assert isinstance(got, ChangeNotice) and got.ids == (theirs.id,)  # its own: skipped
        finally:
            listener.stop()


def test_the_listener_stops_and_says_why_when_the_server_stays_away(
    pg_server: PostgresServer, pg_address: str
) -> None:
    with SharedBrain.open(pg_address, actor="app") as brain:
        brain.add("makes the layout")
    listener, heard = _listen(pg_address, reconnect_for_s=0.5)
    try:
        with server_away(pg_server, pg_address):
            failure = heard.get(timeout=WAIT_S)
            assert isinstance(failure, psycopg.OperationalError)
            assert listener.error is failure
    finally:
        listener.stop()


@pytest.mark.parametrize("after", [True, False], ids=["answer-lost", "commit-lost"])
def test_a_commit_cut_on_the_wire_is_written_once(pg_address: str, after: bool) -> None:
    """The connection cut with a COMMIT on the wire: after the server got it (the client
    cannot know it landed) or before. Either way the trace is there once, not twice."""
    relay = CommitCutter(pg_address)
    try:
        with SharedBrain.open(relay.address, actor="test") as brain:
            brain.add("makes the layout")
            relay.cut_next_commit(after=after)
            added = brain.add("written across the cut")
            assert relay.cuts == 1
            found = [t for t in brain.list_traces() if t.content == "written across the cut"]
            assert [t.id for t in found] == [added.id]
            assert [e.op for e in brain.history(added.id)] == ["add"]
            assert brain.count() == 2
    finally:
        relay.close()
