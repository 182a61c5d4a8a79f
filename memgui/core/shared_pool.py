"""Many threads on one shared brain: a pool of connections (`psycopg_pool`), from which each
piece of work borrows one for as long as it runs.

A `SharedBrain` holds one connection and serves one thread at a time; a server answering
many requests, or a program with worker threads, takes a `SharedBrainPool` instead and asks
it for a brain per request: `with pool.brain(actor="agent") as brain: brain.update(…)`. The
pool opens connections as they are needed, up to `max_size`; a thread asking for one while
all are lent waits for one to come back, up to `timeout` seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument, PostgresUnavailable
from memgui.core.model import check_int_range
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres
from memgui.core.storage.engine import parse_postgres_address

if TYPE_CHECKING:
    from psycopg_pool import ConnectionPool

MAX_POOL = 1_000
CHECK_AFTER_IDLE_S = 1.0  # a connection idle in the pool longer is checked before a loan


class SharedBrainPool:
    """A pool of connections to one brain id (see the module)."""

    def __init__(
        self,
        address: str,
        brain_id: str | None = None,
        *,
        actor: str = "cli",
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
    ) -> None:
        check_int_range("min_size", min_size, 0, MAX_POOL)
        check_int_range("max_size", max_size, 1, MAX_POOL)
        if min_size > max_size:
            raise InvalidArgument(
                "min_size", f"must be at most max_size {max_size} (got {min_size})", min_size
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidArgument("timeout", f"must be a positive number (got {timeout!r})")
        self.address = parse_postgres_address(address, brain_id)
        self.brain_id = self.address.brain_id
        self.actor = actor
        self._marked = False
        self._given_back: dict[int, float] = {}  # a connection's id -> when it came back
        postgres.connect(self.address).close()  # tables made, layout checked, before any use
        try:
            from psycopg_pool import ConnectionPool
        except ImportError as exc:  # an optional dependency: memgui[postgres]
            raise PostgresUnavailable(
                "a pool of PostgreSQL connections needs psycopg_pool: "
                "pip install 'memgui[postgres]'"
            ) from exc
        name = f"memgui pool {os.getpid()}"
        self._pool: ConnectionPool[Any] = ConnectionPool(
            self.address.conninfo,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            # A loan idle a while is checked first: one the server dropped meanwhile (a
            # restart, a network cut) is replaced, not lent; a broken one given back is
            # dropped. One given back just now is lent as it is: no round trip per loan.
            check=self._check,
            reset=self._returned,
            kwargs={"autocommit": True, "application_name": name},
            open=True,
            name=name,
        )

    def _returned(self, conn: Any) -> None:
        self._given_back[id(conn)] = time.monotonic()

    def _check(self, conn: Any) -> None:
        from psycopg_pool import ConnectionPool

        given_back = self._given_back.pop(id(conn), None)
        if given_back is None or time.monotonic() - given_back > CHECK_AFTER_IDLE_S:
            ConnectionPool.check_connection(conn)

    @contextmanager
    def brain(self, actor: str | None = None) -> Iterator[SharedBrain]:
        """A brain over a borrowed connection, given back when the block ends (a transaction
        left open by a failure is rolled back by the pool). If the server drops it during
        the loan, the brain borrows another (`shared_reconnect`); a broken one given back
        is dropped by the pool."""
        lent = [self._pool.getconn()]

        def another() -> Any:
            from psycopg_pool import PoolTimeout

            # The cut one back first (the pool drops it), or a full pool would wait for it.
            self._pool.putconn(lent.pop())
            try:
                lent.append(self._pool.getconn())
            except PoolTimeout as exc:
                raise PostgresUnavailable(
                    f"cannot reach the PostgreSQL brain {self.address}: {exc}"
                ) from exc
            return lent[-1]

        brain = SharedBrain(
            lent[0], self.address, actor or self.actor, self._marked, connect=another
        )
        try:
            yield brain
        finally:
            self._marked = self._marked or brain.marked  # once per pool, not per loan
            for conn in lent:
                self._pool.putconn(conn)

    def stats(self) -> dict[str, int]:
        """The pool's counters (`psycopg_pool`'s: pool_size, requests_waiting …)."""
        return dict(self._pool.get_stats())

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> SharedBrainPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
