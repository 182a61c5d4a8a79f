"""Live refresh of a shared brain: every change to its traces, links or knowledge graph is
announced on a channel of its own, and `ChangeListener` hears them on a connection in a
thread.

The announcement comes from triggers memgui's layout installs on `memory_traces` and
`memory_links` (version 2) and on `knowledge_nodes` and `knowledge_edges` (version 7), so
AgentOS's writes and any other program's are heard as well as memgui's. One notification
per statement, not per row (a statement-level trigger over its transition table): a bulk
copy of 100,000 rows sends one, and Postgres delivers it at commit, so a rolled-back write
announces nothing. The payload is JSON, `{"ids": [...]}` naming the traces changed (a
link: its two traces), `{"nodes": [...]}` the knowledge-graph nodes (an edge: its two
ends), or a null list when they would not fit in a notification (about 7 kB): a listener
then reads everything it shows again.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memgui.core.storage.engine import PostgresAddress, with_password

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger("memgui.postgres.notify")

MAX_IDS_TEXT = 7000  # NOTIFY's payload is at most 8000 bytes; the rest says "many"
MAX_NAMED = 150  # a statement changing more traces says "many" without naming them
LISTEN_TICK_S = 0.25  # how often the listening thread looks whether it should stop
RECONNECT_FOR_S = 60.0  # a dropped listening connection is made again for so long
RECONNECT_WAITS_S = (0.1, 0.25, 0.5, 1.0, 2.0)  # between tries, then the last again

# A brain's writing connection made again (`SharedBrain.ensure_connected`): the server
# process that replaced each one, so a listener told to skip the old one's notices (its own
# program's writes) skips the new one's too.
_replaced: dict[int, int] = {}
_replaced_lock = threading.Lock()


def note_replaced(old_pid: int, new_pid: int) -> None:
    with _replaced_lock:
        _replaced[old_pid] = new_pid


def current_pid(pid: int) -> int:
    """The server process that now writes for the connection that was `pid`."""
    with _replaced_lock:
        seen = {pid}
        while pid in _replaced and _replaced[pid] not in seen:
            pid = _replaced[pid]
            seen.add(pid)
        return pid


_CHANGED = {  # each table's changed ids, from its transition table `changed`
    "memory_traces": "SELECT brain_id, id FROM changed",
    "memory_links": (
        "SELECT brain_id, from_id FROM changed UNION SELECT brain_id, to_id FROM changed"
    ),
    "knowledge_nodes": "SELECT brain_id, id FROM changed",
    "knowledge_edges": (
        "SELECT brain_id, source_id FROM changed UNION SELECT brain_id, target_id FROM changed"
    ),
}
# What a table's ids name in the payload: traces (a link: its two traces), or knowledge-graph
# nodes (an edge: its two ends; a trace's copy in the graph has the trace's id).
_KEY = {table: "nodes" if table.startswith("knowledge_") else "ids" for table in _CHANGED}


def _function(table: str) -> str:
    # Counted first: a big statement's ids are never gathered (a 100k-row copy would spend
    # more on naming them than on writing them), only a few are.
    return f"""
CREATE OR REPLACE FUNCTION memgui_notify_{table}() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  brain RECORD;
  ids TEXT;
BEGIN
  FOR brain IN SELECT c.brain_id, count(*) AS n FROM ({_CHANGED[table]}) AS c (brain_id, id)
    GROUP BY c.brain_id
  LOOP
    ids := NULL;
    IF brain.n <= {MAX_NAMED} THEN
      SELECT string_agg(DISTINCT to_json(c.id)::text, ',') INTO ids
        FROM ({_CHANGED[table]}) AS c (brain_id, id) WHERE c.brain_id = brain.brain_id;
    END IF;
    PERFORM pg_notify(
      'memgui_' || left(md5(brain.brain_id), 24),
      CASE WHEN length(ids) <= {MAX_IDS_TEXT}
        THEN '{{"{_KEY[table]}": [' || ids || ']}}' ELSE '{{"{_KEY[table]}": null}}' END
    );
  END LOOP;
  RETURN NULL;
END $$;
"""


def _triggers(table: str) -> str:
    """One trigger per event: a transition table serves one event only."""
    out = []
    for event, side in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
        trigger = f"memgui_notify_{table}_{event.lower()}"
        out.append(
            f"DROP TRIGGER IF EXISTS {trigger} ON {table};\n"
            f"CREATE TRIGGER {trigger} AFTER {event} ON {table} "
            f"REFERENCING {side} TABLE AS changed FOR EACH STATEMENT "
            f"EXECUTE FUNCTION memgui_notify_{table}();"
        )
    return "\n".join(out)


# Installed with the rest of the layout, under its lock (postgres.connect).
NOTIFY_SCHEMA = "\n".join(_function(t) + _triggers(t) for t in _CHANGED)
TRIGGERS = 3 * len(_CHANGED)


def channel_of(brain_id: str) -> str:
    """The channel a brain's changes are announced on (as the triggers name it)."""
    return "memgui_" + hashlib.md5(brain_id.encode()).hexdigest()[:24]  # noqa: S324 - a name


def installed(conn: psycopg.Connection[tuple[Any, ...]]) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'memgui_notify_%' AND NOT tgisinternal"
    ).fetchone()
    return bool(row and row[0] == TRIGGERS)


@dataclass(frozen=True)
class ChangeNotice:
    """What another connection changed: the trace ids (None: too many to name, read all
    again), the server process that made the change, and the knowledge-graph nodes it
    changed (a node, or an edge's ends: layout 7)."""

    ids: tuple[str, ...] | None
    sender_pid: int
    nodes: tuple[str, ...] = ()


def parse_payload(payload: str, sender_pid: int) -> ChangeNotice:
    key = "ids"
    try:
        said = json.loads(payload)
        key = "nodes" if "nodes" in said else "ids"
        ids = said.get(key)
    except (ValueError, AttributeError, TypeError):
        ids = None  # not ours, or damaged: read all again rather than miss a change
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return ChangeNotice(None, sender_pid)
    if key == "nodes":
        return ChangeNotice((), sender_pid, tuple(ids))
    return ChangeNotice(tuple(ids), sender_pid)


class ChangeListener:
    """Listens for a brain's changes on a connection of its own, in a thread, and calls
    `on_change` (in that thread) for each. `ignore_pid` skips the notices of one server
    process: the caller's own writing connection, whose changes it knows already (and of
    the connection that replaced it, `note_replaced`).

    A dropped connection (a server restart, a network cut) is made again, for up to
    `reconnect_for_s` seconds; once listening again it calls `on_change` with a notice
    naming no ids (read everything again: what changed meanwhile was not heard). If the
    server stays away longer, `on_error` is called and the listener stops."""

    def __init__(
        self,
        address: PostgresAddress,
        on_change: Callable[[ChangeNotice], None],
        *,
        ignore_pid: int | None = None,
        password: str | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        reconnect_for_s: float = RECONNECT_FOR_S,
    ) -> None:
        self.address = address
        self.on_change = on_change
        self.on_error = on_error  # called (in the thread) when listening stopped on a failure
        self.ignore_pid = ignore_pid
        self.reconnect_for_s = reconnect_for_s
        self._password = password
        self._stop = threading.Event()
        self._listening = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None  # why it stopped listening, if it failed
        self.reconnected = 0  # times the connection was made again

    def start(self) -> ChangeListener:
        """Connect and LISTEN (here, so a failure to connect is the caller's), then hear
        notices in a thread."""
        conn = self._connect()
        self._thread = threading.Thread(
            target=self._listen, args=(conn,), name="memgui-listen", daemon=True
        )
        self._thread.start()
        return self

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        import psycopg

        conninfo = with_password(self.address.conninfo, self._password)
        conn = psycopg.connect(conninfo, autocommit=True)
        conn.execute(f'LISTEN "{channel_of(self.address.brain_id)}"')
        return conn

    def _listen(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        while True:
            try:
                self._hear(conn)
                return  # stopped
            except Exception as exc:  # the server went away: listen again, or say so
                if self._stop.is_set():
                    return
                log.warning("listening to %s was cut (%s): connecting again", self.address, exc)
                again = self._reconnect(exc)
                if again is None:
                    return
                conn = again
                self.reconnected += 1
                self.on_change(ChangeNotice(None, 0))  # what changed meanwhile: unheard

    def _hear(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        with conn:
            while not self._stop.is_set():
                for notice in conn.notifies(timeout=LISTEN_TICK_S):
                    ignored = self.ignore_pid
                    if ignored is not None and notice.pid != ignored:
                        ignored = self.ignore_pid = current_pid(ignored)
                    if notice.pid == ignored:
                        continue
                    self.on_change(parse_payload(notice.payload, notice.pid))

    def _reconnect(self, cut: BaseException) -> psycopg.Connection[tuple[Any, ...]] | None:
        """A new listening connection, tried until `reconnect_for_s` has passed (None once
        it has, or when stopped meanwhile; `on_error` is called then)."""
        deadline = time.monotonic() + self.reconnect_for_s
        failure: BaseException = cut
        for attempt in itertools.count():
            if self._stop.wait(RECONNECT_WAITS_S[min(attempt, len(RECONNECT_WAITS_S) - 1)]):
                return None
            try:
                return self._connect()
            except Exception as exc:
                failure = exc
            if time.monotonic() >= deadline:
                break
        self.error = failure
        log.warning("stopped listening to %s: %s", self.address, failure)
        if self.on_error is not None:
            self.on_error(failure)
        return None

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
