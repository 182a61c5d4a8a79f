"""What this memgui is made of, for `memgui --version`: its own version, the brain schemas it
reads and writes, and the SQLite and sqlite-vec it runs on (the extension loaded for real,
so a build without it says so here rather than at the first search by meaning)."""

from __future__ import annotations

import platform
from typing import Any

import apsw

from memgui import __version__
from memgui.core.search import bm25
from memgui.core.search.vectors import VectorIndexUnavailable, load_sqlite_vec
from memgui.core.storage import schema

OLDEST_MEMGUI_SCHEMA = 0  # an AgentOS brain memgui has not written yet


def sqlite_vec_version() -> str:
    """sqlite-vec's own `vec_version()`, from the extension loaded into a connection, or
    'unavailable: <why>' when it cannot be loaded."""
    conn = apsw.Connection(":memory:")  # asks the extension its version; holds no data
    try:
        load_sqlite_vec(conn)
        return str(conn.execute("SELECT vec_version()").get)
    except (VectorIndexUnavailable, apsw.Error) as error:
        return f"unavailable: {error}"
    finally:
        conn.close()


def keyword_ranking() -> str:
    """Which function ranks keyword search: `memgui_bm25` when the extension loads into a
    connection, else FTS5's bm25 (the same scores, slower at a million traces)."""
    conn = apsw.Connection(":memory:")
    try:
        return bm25.FUNCTION if bm25.load(conn) else "bm25 (FTS5's; memgui_bm25 not built)"
    finally:
        conn.close()


def versions() -> dict[str, Any]:
    """The versions `memgui --version` prints (the app adds Qt's)."""
    agentos = int(schema.AGENTOS_SCHEMA_VERSION)
    return {
        "memgui": __version__,
        "schema": {
            "memgui": {
                "writes": schema.SCHEMA_VERSION,
                "reads_from": OLDEST_MEMGUI_SCHEMA,
                "reads_up_to": schema.SCHEMA_VERSION,
                "older": "migrated on the first write, after a backup beside the file",
                "newer": "refused, the file untouched",
            },
            "agentos": {
                "writes": agentos,
                "reads_up_to": agentos,
                "newer": "opened read-only",
            },
        },
        "sqlite": apsw.sqlite_lib_version(),
        "apsw": apsw.apsw_version(),
        "sqlite_vec": sqlite_vec_version(),
        "keyword_ranking": keyword_ranking(),
        "python": platform.python_version(),
    }


def version_lines(found: dict[str, Any]) -> list[str]:
    """`versions()` (with what the app added) as the lines `memgui --version` prints."""
    ours, agentos = found["schema"]["memgui"], found["schema"]["agentos"]
    lines = [
        f"memgui {found['memgui']}",
        f"brain schema: memgui {ours['writes']} (reads {ours['reads_from']}–{ours['reads_up_to']}; "
        f"older: {ours['older']}; newer: {ours['newer']})",
        f"              AgentOS {agentos['writes']} (reads up to {agentos['reads_up_to']}; "
        f"newer: {agentos['newer']})",
        f"SQLite {found['sqlite']} (apsw {found['apsw']})",
        f"sqlite-vec {found['sqlite_vec']}",
        f"keyword ranking: {found['keyword_ranking']}",
    ]
    if "qt" in found:
        lines.append(f"Qt {found['qt']} (PySide6 {found.get('pyside6', '?')})")
    lines.append(f"Python {found['python']}")
    return lines
