"""A search's recalls on PostgreSQL: the spaced-repetition bookkeeping of the traces it
returned (strength, metadata, last access, retrieval count), as `search/searching.py`
records them in a file: no version bump and no journal row, so a person's open edit does
not conflict with an agent's search.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import decay
from memgui.core.storage import store
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres import COLUMNS

if TYPE_CHECKING:
    import psycopg


def note_recalls(
    conn: psycopg.Connection[tuple[Any, ...]],
    brain_id: str,
    where: tuple[str, list[Any]],
    trace_ids: list[str],
    now: int,
) -> dict[str, dict[str, Any]]:
    """Note each of `trace_ids` that still passes the search's filter `where` as recalled,
    in one transaction; returns them after, by id. A row another writer holds is skipped
    (SKIP LOCKED), as a file's search does not wait on a busy brain: the answer is not
    held up for bookkeeping."""
    sql, params = where
    with conn.transaction():
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memory_traces WHERE {sql} AND id = ANY(%s) "
            "ORDER BY id FOR UPDATE SKIP LOCKED",
            (*params, trace_ids),
        ).fetchall()
        recalled = {}
        for row in rows:
            snap = store.row_to_snapshot(row)
            strength, metadata = decay.on_recall(
                snap["strength"],
                snap["created_at"],
                snap["last_accessed"],
                snap["retrieval_count"],
                snap["metadata"],
                snap["emotions"],
                snap["category"],
                now,
            )
            recalled[snap["id"]] = dict(
                snap,
                strength=strength,
                metadata=metadata,
                last_accessed=now,
                retrieval_count=snap["retrieval_count"] + 1,
            )
        conn.cursor().executemany(
            "UPDATE memory_traces SET strength = %s, metadata = %s, last_accessed = %s, "
            "retrieval_count = %s WHERE brain_id = %s AND id = %s",
            [
                (
                    *(s["strength"], dumps(s["metadata"]), s["last_accessed"]),
                    *(s["retrieval_count"], brain_id, s["id"]),
                )
                for s in recalled.values()
            ],
        )
    return recalled
