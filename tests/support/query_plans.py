"""What SELECT statements a call ran on a connection, and how SQLite plans each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import apsw


def selects_run(conn: apsw.Connection, call: Callable[[], Any]) -> tuple[Any, list[tuple]]:
    """`call()`'s result and the (sql, bindings) of every SELECT (`WITH … SELECT` too) it
    ran on `conn`."""
    statements: list[tuple[str, tuple]] = []

    def remember(_cursor, sql: str, bindings) -> bool:
        if sql.lstrip().upper().startswith(("SELECT", "WITH")):
            statements.append((sql, tuple(bindings or ())))
        return True

    conn.exec_trace = remember
    try:
        result = call()
    finally:
        conn.exec_trace = None
    return result, statements


def plan_of(conn: apsw.Connection, sql: str, bindings: tuple) -> list[str]:
    return [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", bindings)]
