"""A shared brain's connection made again when the server dropped it (a restart, a network
cut, `pg_terminate_backend`): the next call reconnects and succeeds, or fails saying the
server is unreachable, and succeeds once it is back. No write is lost or half-applied:

- A write is one transaction. A connection lost before its COMMIT was rolled back by the
  server: the call is made again on the new connection.
- A connection lost during the COMMIT leaves the outcome unknown to the client: the new
  connection looks for the write's journal batch. There: it was written, the call returns
  as it would have. Not there: it was not, and the call is made again.
- Inside `batch()`, the batch's earlier calls went with the lost transaction: the call
  fails (`PostgresUnavailable`, nothing of the batch written), and the caller decides.
- A brain lent by a `SharedBrainPool` borrows another connection from the pool, which
  drops the broken one when it is given back and checks one idle a while before lending
  it.
- A write whose transaction the server ended to break a deadlock (one that takes the
  journal lock late, `SharedTransactions.writing(order_late=True)`, against a merge or a
  revert) wrote nothing and is made again.

Each call is tried up to `ATTEMPTS` times. `reconnecting` wraps a brain's public calls (not
its jobs, whose generators fail on the lost connection and leave the next call to
reconnect). The change listener reconnects on its own (`storage/postgres_notify.py`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memgui.core.errors import BrainDeadlocked, PostgresUnavailable

if TYPE_CHECKING:
    import psycopg

    from memgui.core.shared_brain import SharedBrain

log = logging.getLogger("memgui.postgres.reconnect")

C = TypeVar("C", bound=type)
# Tries of a call whose connection was cut (a pool may lend a second one the server had
# dropped too) or whose transaction lost a deadlock.
ATTEMPTS = 4
# Not calls on the server, or ones that manage the connection or a transaction themselves.
NOT_WRAPPED = frozenset({"open", "close", "batch", "writing", "now", "use_embedder", "graph_rows"})


def lost(conn: psycopg.Connection[tuple[Any, ...]], exc: BaseException) -> bool:
    """Whether `exc` says the connection itself is gone (psycopg then marks it closed),
    not that a statement failed on a live one (a deadlock, a lock timeout)."""
    import psycopg

    return isinstance(exc, psycopg.OperationalError) and conn.closed


def unreachable(address: object, exc: BaseException, what: str) -> PostgresUnavailable:
    return PostgresUnavailable(
        f"the connection to the PostgreSQL brain {address} was lost ({exc}); {what}"
    )


def landed(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, batch_id: str) -> bool:
    """Whether a journal batch was committed."""
    row = conn.execute(
        "SELECT 1 FROM memgui_journal WHERE brain_id = %s AND batch_id = %s LIMIT 1",
        (brain_id, batch_id),
    ).fetchone()
    return row is not None


def reconnecting(cls: C) -> C:
    """Each public call of `cls` (a `SharedBrain`) reconnects and is made once more when
    the connection was lost (see the module)."""
    for name in dir(cls):
        method = getattr(cls, name)
        if name.startswith("_") or name in NOT_WRAPPED or not inspect.isfunction(method):
            continue
        if inspect.isgeneratorfunction(method):
            continue  # a job: it fails on a lost connection; the next call reconnects
        setattr(cls, name, _wrapped(method))
    return cls


def _wrapped(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(brain: SharedBrain, *args: Any, **kwargs: Any) -> Any:
        if brain.calls_open or brain.in_batch:  # the outermost call decides
            return method(brain, *args, **kwargs)
        brain.calls_open += 1
        try:
            for attempt in itertools.count(1):
                brain.ensure_connected()  # PostgresUnavailable while the server is down
                conn = brain.conn  # the call may replace it (a COMMIT's answer lost)
                try:
                    return method(brain, *args, **kwargs)
                except Exception as exc:
                    cut = lost(conn, exc)
                    if not (cut or deadlocked(exc)):
                        raise
                    if attempt == ATTEMPTS:
                        if cut:
                            raise unreachable(brain.address, exc, "nothing was written") from exc
                        raise BrainDeadlocked(str(brain.address), method.__name__) from exc
                    log.warning("%s on %s (%s): made again", method.__name__, brain.address, exc)
            raise AssertionError("unreachable")  # the loop returns or raises
        finally:
            brain.calls_open -= 1

    return call


def deadlocked(exc: BaseException) -> bool:
    """The server ended the transaction to break a deadlock (`order_late` writes against a
    merge or revert): nothing of it was written, and it can be made again."""
    import psycopg

    return isinstance(exc, psycopg.errors.DeadlockDetected)
