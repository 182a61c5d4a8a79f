"""The advisory lock of a brain id in PostgreSQL, which its long operations hold.

AgentOS takes `pg_advisory_xact_lock(hashtext('agentos_brain:' || brainId))` around its
schema migrations (`MigrationRunner.runPending`); memgui's copy, re-file, sweep, merge and
consolidation take the same key, so neither program runs one of them on a brain the other is
working through. The lock is the transaction's: it goes when the transaction ends, however
it ends. A second one is refused at once (`BrainLocked`), naming the holder as the server sees
it: the program (`application_name`), its process on the server, its client and since when.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import BrainLocked

if TYPE_CHECKING:
    import psycopg

KEY_SQL = "hashtext('agentos_brain:' || %s)"  # AgentOS's key, as text → int4 → bigint
_APP_NAME_MAX = 63  # the server cuts application_name there


def hold(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    operation: str,
    shown: str,
    wait: bool = False,
) -> None:
    """Take the brain's lock for the current transaction, or wait for it (`wait`); refused
    with `BrainBusy` when another session holds it. The session names itself after the
    operation meanwhile, so a refused one can say who holds the lock and why."""
    name = f"memgui {operation}"[:_APP_NAME_MAX]
    conn.execute("SELECT set_config('application_name', %s, true)", (name,))
    if wait:
        conn.execute(f"SELECT pg_advisory_xact_lock({KEY_SQL})", (brain_id,))
        return
    row = conn.execute(f"SELECT pg_try_advisory_xact_lock({KEY_SQL})", (brain_id,)).fetchone()
    if row is not None and row[0]:
        return
    raise BrainLocked(shown, operation, holder(conn, brain_id))


def holder(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> str:
    """Who holds the brain's lock: `"memgui sweep" (server process 123, client 10.0.0.2,
    since 12:00:01 UTC)`, or `another session` when the server does not let us see it."""
    row = conn.execute(
        "SELECT a.application_name, a.pid, host(a.client_addr), "
        "to_char(a.xact_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') "
        "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
        f"AND ((l.classid::bigint << 32) | l.objid::bigint) = {KEY_SQL}::bigint "
        "AND l.pid != pg_backend_pid() LIMIT 1",
        (brain_id,),
    ).fetchone()
    if row is None or row[1] is None:
        return "another session"
    app, pid, client, since = row
    where = f"client {client}" if client else "a local client"
    return (
        f"{app or 'a program with no name'!r} (server process {pid}, {where}, "
        f"in a transaction since {since} UTC)"
    )
