"""Live refresh of a shared brain: the triggers of layout 2 announce every change to a
brain's traces and links on its channel, those of layout 7 every change to its knowledge
graph (nodes by id, an edge by its ends), whoever writes (memgui, AgentOS, plain SQL), and
`ChangeListener` hears them on a connection of its own. Each test waits for the notice it
needs (an event), never for a time."""

from __future__ import annotations

import queue
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest

from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres, postgres_notify
from memgui.core.storage.engine import parse_postgres_address
from memgui.core.storage.postgres_notify import ChangeListener, ChangeNotice
from tests.support.postgres import PostgresServer
from tests.support.waiting import WAIT_S

pytestmark = pytest.mark.slow  # a real server


def _conninfo(address: str) -> str:
    parts = urlsplit(address)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "brain_id"]
    return urlunsplit(parts._replace(query=urlencode(query)))


class Heard:
    """The notices a listener heard, in order, each waited for."""

    def __init__(self) -> None:
        self.notices: queue.Queue[ChangeNotice] = queue.Queue()

    def next(self) -> ChangeNotice:
        return self.notices.get(timeout=WAIT_S)


@pytest.fixture
def brain(pg_address: str) -> Iterator[SharedBrain]:
    with SharedBrain.open(pg_address, actor="test") as opened:
        yield opened


def listen(address: str, ignore_pid: int | None = None) -> tuple[ChangeListener, Heard]:
    heard = Heard()
    listener = ChangeListener(
        parse_postgres_address(address), heard.notices.put, ignore_pid=ignore_pid
    ).start()
    return listener, heard


def test_another_connections_writes_are_heard_with_their_ids(
    brain: SharedBrain, pg_address: str
) -> None:
    listener, heard = listen(pg_address)
    try:
        with SharedBrain.open(pg_address, actor="other") as other:
            one = other.add("written elsewhere")
            assert heard.next().ids == (one.id,)
            other.update(one.id, {"content": "edited elsewhere"})
            assert heard.next().ids == (one.id,)
            two = other.add("second")
            assert heard.next().ids == (two.id,)
            other.link(one.id, two.id, "relates_to")
            assert sorted(heard.next().ids or ()) == sorted([one.id, two.id])
            other.purge(two.id)  # its link first, then the row: two statements
            assert sorted(heard.next().ids or ()) == sorted([one.id, two.id])
            assert heard.next().ids == (two.id,)
    finally:
        listener.stop()
    assert listener.error is None


def test_writes_made_without_memgui_are_heard_too(pg_address: str, brain: SharedBrain) -> None:
    brain.add("makes the layout")
    listener, heard = listen(pg_address)
    try:
        # As AgentOS writes: its own INSERT, no memgui code, no journal.
        with psycopg.connect(_conninfo(pg_address), autocommit=True) as agentos:
            agentos.execute(
                "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
                "VALUES ('team', 'mt_agentos', 'episodic', 'user', 'from AgentOS', 1)"
            )
            assert heard.next().ids == ("mt_agentos",)
            agentos.execute("DELETE FROM memory_traces WHERE id = 'mt_agentos'")
            assert heard.next().ids == ("mt_agentos",)
    finally:
        listener.stop()


def test_own_writes_rollbacks_and_other_brains_are_not_heard(
    brain: SharedBrain, pg_server: PostgresServer, pg_address: str
) -> None:
    brain.add("makes the layout")
    listener, heard = listen(pg_address, ignore_pid=brain.conn.info.backend_pid)
    database = urlsplit(pg_address).path.lstrip("/")
    try:
        brain.add("this connection's own: skipped")
        with SharedBrain.open(pg_server.address(database, "other-team")) as neighbour:
            neighbour.add("another brain's: another channel")
        with (
            psycopg.connect(_conninfo(pg_address), autocommit=True) as conn,
            pytest.raises(psycopg.errors.UniqueViolation),
            conn.transaction(),
        ):
            conn.execute(
                "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
                "VALUES ('team', 'mt_twice', 'episodic', 'user', 'x', 1), "
                "('team', 'mt_twice', 'episodic', 'user', 'x', 1)"
            )  # rolled back: announces nothing
        with SharedBrain.open(pg_address, actor="other") as other:
            last = other.add("the first notice heard")
        assert heard.next().ids == (last.id,)  # notices come in commit order
    finally:
        listener.stop()


def test_a_statement_changing_many_traces_says_read_everything(
    brain: SharedBrain, pg_address: str
) -> None:
    brain.add("makes the layout")
    listener, heard = listen(pg_address)
    try:
        with psycopg.connect(_conninfo(pg_address), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
                "SELECT 'team', 'mt_bulk_' || n, 'episodic', 'user', 'bulk', n "
                "FROM generate_series(1, 2000) AS n"
            )
        assert heard.next().ids is None  # too many to name: one notice, read all again
    finally:
        listener.stop()


def test_a_database_made_without_the_triggers_gets_them_on_open(pg_address: str) -> None:
    with psycopg.connect(_conninfo(pg_address), autocommit=True) as conn:
        conn.execute(postgres.SCHEMA)  # the tables, as a memgui without live refresh made them
        conn.execute(
            "INSERT INTO brain_meta VALUES ('team', %s, '1'), ('team', 'schema_version', '2')",
            (postgres.SCHEMA_KEY,),
        )
        assert not postgres_notify.installed(conn)
    listener, heard = listen(pg_address)  # the channel is there before any trigger
    try:
        with SharedBrain.open(pg_address) as brain:
            assert postgres_notify.installed(brain.conn)
            added = brain.add("heard after the upgrade")
            meta = brain.conn.execute(
                "SELECT value FROM brain_meta WHERE brain_id = 'team' AND key = %s",
                (postgres.SCHEMA_KEY,),
            ).fetchone()
            assert meta == (str(postgres.SCHEMA_VERSION),)  # marked anew by its first write
        assert heard.next().ids == (added.id,)
    finally:
        listener.stop()


def test_knowledge_graph_writes_are_heard_by_their_nodes(
    brain: SharedBrain, pg_address: str
) -> None:
    listener, heard = listen(pg_address, ignore_pid=brain.conn.info.backend_pid)
    try:
        with SharedBrain.open(pg_address, actor="other") as other:
            a = other.add_node("Alice", "person").id
            assert heard.next() == ChangeNotice((), other.conn.info.backend_pid, (a,))
            b = other.add_node("Bob", "person").id
            assert heard.next().nodes == (b,)
            other.add_edge(a, b, "knows")
            assert set(heard.next().nodes) == {a, b}
        with psycopg.connect(_conninfo(pg_address), autocommit=True) as plain:
            plain.execute("DELETE FROM knowledge_edges WHERE brain_id = 'team'")  # as AgentOS
            assert set(heard.next().nodes) == {a, b}
        brain.add_node("mine, not heard", "concept")
        with SharedBrain.open(pg_address, actor="other") as other:
            added = other.add("a trace").id
            assert heard.next().ids == (added,)  # the next notice: not our own node's
    finally:
        listener.stop()


def test_a_database_of_layout_5_gets_the_graph_triggers_on_open(pg_address: str) -> None:
    with SharedBrain.open(pg_address) as brain:
        brain.add("written at layout 5")
        for table in ("knowledge_nodes", "knowledge_edges"):
            for event in ("insert", "update", "delete"):
                brain.conn.execute(f"DROP TRIGGER memgui_notify_{table}_{event} ON {table}")
        brain.conn.execute(
            "UPDATE brain_meta SET value = '5' WHERE brain_id = 'team' AND key = %s",
            (postgres.SCHEMA_KEY,),
        )
        assert not postgres_notify.installed(brain.conn)
    listener, heard = listen(pg_address)
    try:
        with SharedBrain.open(pg_address) as brain:
            assert postgres_notify.installed(brain.conn)
            node = brain.add_node("heard after the upgrade", "concept").id
            meta = brain.conn.execute(
                "SELECT value FROM brain_meta WHERE brain_id = 'team' AND key = %s",
                (postgres.SCHEMA_KEY,),
            ).fetchone()
            assert meta == ("7",) == (str(postgres.SCHEMA_VERSION),)
        assert heard.next().nodes == (node,)
    finally:
        listener.stop()


def test_payloads_that_are_not_ours_read_as_everything() -> None:
    assert postgres_notify.parse_payload("not json", 7) == ChangeNotice(None, 7)
    assert postgres_notify.parse_payload('{"ids": [1]}', 7) == ChangeNotice(None, 7)
    assert postgres_notify.parse_payload('{"ids": ["a"]}', 7) == ChangeNotice(("a",), 7)
    assert postgres_notify.parse_payload('{"nodes": ["n"]}', 7) == ChangeNotice((), 7, ("n",))
    assert postgres_notify.parse_payload('{"nodes": null}', 7) == ChangeNotice(None, 7)
    assert postgres_notify.parse_payload("[1]", 7) == ChangeNotice(None, 7)
    assert postgres_notify.channel_of("team").startswith("memgui_")
    assert len(postgres_notify.channel_of("x" * 500)) <= 63  # an identifier's bound
