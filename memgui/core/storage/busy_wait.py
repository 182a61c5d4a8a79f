"""How long a brain connection waits for another connection's lock, and how finely.

SQLite's own busy timeout sleeps 1, 2, 5, 10, 15, 20, 25 ms … between its looks at the
lock: a write that finds the upkeep's 3 ms merge step under way starts ~8 ms later, and
one behind a 9 ms step ~18 ms later. `memgui_busy_wait` (csrc/busy_wait.c, loaded with
memgui_bm25) looks every millisecond instead, inside SQLite, without Python's lock
(docs/performance.md, "Waiting for a lock"). Without the extension (no C compiler at
install), SQLite's busy timeout waits as long, in coarser steps.
"""

from __future__ import annotations

import weakref

import apsw

from memgui.core.search import bm25

# Per connection: whether `memgui_busy_wait` answered on it (an extension built before the
# function was added has only memgui_bm25).
_polls: weakref.WeakKeyDictionary[apsw.Connection, bool] = weakref.WeakKeyDictionary()


def set_wait(conn: apsw.Connection, ms: int) -> None:
    """Let `conn` wait up to `ms` for a lock another connection holds (0: give up at once),
    looking every millisecond when the extension is loaded on it."""
    if bm25.available(conn) and _polls.get(conn, True):
        try:
            conn.execute("SELECT memgui_busy_wait(?)", (ms,)).fetchall()
            _polls[conn] = True
            return
        except apsw.SQLError:
            _polls[conn] = False
    conn.setbusytimeout(ms)


def polls(conn: apsw.Connection) -> int | None:
    """How many times any connection's handler looked for a lock so far; None when `conn`
    waits with SQLite's busy timeout."""
    if not (bm25.available(conn) and _polls.get(conn, False)):
        return None
    return int(conn.execute("SELECT memgui_busy_polls()").get)
