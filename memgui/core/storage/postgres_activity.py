"""The SQL of agent activity on a PostgreSQL brain (`core/activity.py` has the rules;
`storage/activity_rows.py` the same reads on a file), and its review mark, kept as on a
file: `brain_meta` key `memgui_review`, each change journaled as a `review` row.

Every write of a shared brain takes the brain's journal lock first
(`postgres_locks.hold_journal_order`), so the brain's journal ids are drawn and committed in
order and a batch's rows are one run of the brain's ids. The walk reads the brain's own rows
by the `(brain_id, id)` index: other brains of the database write concurrently, their ids
interleave with this brain's and are never read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import Conflict
from memgui.core.model import JournalEntry
from memgui.core.storage import postgres, review_rows, store
from memgui.core.storage.json_text import dumps
from memgui.core.storage.postgres_journal import journal

if TYPE_CHECKING:
    import psycopg

    from memgui.core.storage.transaction import WriteBatch


def read_mark(conn: psycopg.Connection[tuple[Any, ...]], brain_id: str) -> dict[str, Any]:
    row = conn.execute(
        "SELECT value FROM brain_meta WHERE brain_id = %s AND key = %s",
        (brain_id, review_rows.KEY),
    ).fetchone()
    return review_rows.parse(row[0]) if row else review_rows.empty()


def write_mark(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    conn.execute(
        "INSERT INTO brain_meta (brain_id, key, value) VALUES (%s, %s, %s) "
        "ON CONFLICT (brain_id, key) DO UPDATE SET value = EXCLUDED.value",
        (brain_id, review_rows.KEY, dumps(after)),
    )
    journal(conn, batch, brain_id, review_rows.OP, review_rows.KEY, before, after)


def undo_mark(
    conn: psycopg.Connection[tuple[Any, ...]], brain_id: str, batch: WriteBatch, entry: JournalEntry
) -> None:
    """Put back the mark a `review` row replaced, if nobody has moved it since (as
    `review_rows.undo` on a file)."""
    conn.execute(  # the mark's row held until the revert commits
        "SELECT 1 FROM brain_meta WHERE brain_id = %s AND key = %s FOR UPDATE",
        (brain_id, review_rows.KEY),
    )
    current = read_mark(conn, brain_id)
    if entry.after is None or current != review_rows.parse(dumps(entry.after)):
        raise Conflict.because(
            review_rows.KEY, "the review mark changed since; nothing to take back"
        )
    earlier = review_rows.parse(dumps(entry.before)) if entry.before else review_rows.empty()
    write_mark(conn, batch, brain_id, current, earlier)


class PostgresActivityRows:
    """Activity's reads (and the review mark's write, given the write's batch) on a brain id
    of a PostgreSQL database."""

    def __init__(
        self,
        conn: psycopg.Connection[tuple[Any, ...]],
        brain_id: str,
        batch: WriteBatch | None = None,
    ) -> None:
        self.conn, self.brain_id, self.batch = conn, brain_id, batch

    def has_journal(self) -> bool:
        return True  # made with the tables on connecting

    def mark(self) -> dict[str, Any]:
        return read_mark(self.conn, self.brain_id)

    def write_mark(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        assert self.batch is not None, "the review mark is written inside a write"
        write_mark(self.conn, self.batch, self.brain_id, before, after)

    def count_after(
        self, through: int, actors: list[str], ops: list[str], skip: list[str], cap: int
    ) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memgui_journal WHERE brain_id = %s AND id > %s "
            "AND actor <> ALL(%s) AND op <> ALL(%s) AND batch_id <> ALL(%s) LIMIT %s) AS n",
            (self.brain_id, through, actors, ops, skip, cap),
        ).fetchone()
        return int(row[0]) if row else 0

    def newest(self, top: int, floor: int) -> tuple[int, str, str, str, int] | None:
        row = self.conn.execute(
            "SELECT id, brain_id, actor, batch_id, at FROM memgui_journal "
            "WHERE brain_id = %s AND id <= %s AND id > %s ORDER BY brain_id DESC, id DESC LIMIT 1",
            (self.brain_id, top, floor),
        ).fetchone()
        return None if row is None else (int(row[0]), row[1], row[2], row[3], int(row[4]))

    def oldest_after(self, after: int) -> tuple[int, str, str, str] | None:
        row = self.conn.execute(
            "SELECT id, brain_id, actor, batch_id FROM memgui_journal "
            "WHERE brain_id = %s AND id > %s ORDER BY brain_id, id LIMIT 1",
            (self.brain_id, after),
        ).fetchone()
        return None if row is None else (int(row[0]), row[1], row[2], row[3])

    def batch_end(self, batch_id: str, last: bool) -> int:
        order = "DESC" if last else ""
        row = self.conn.execute(
            "SELECT id FROM memgui_journal WHERE batch_id = %s AND brain_id = %s "
            f"ORDER BY id {order} LIMIT 1",
            (batch_id, self.brain_id),
        ).fetchone()
        return int(row[0]) if row else 0

    def batch_summary(self, batch_id: str, cap: int, first_rows: int) -> tuple[int, dict[str, int]]:
        size = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memgui_journal WHERE batch_id = %s "
            "AND brain_id = %s LIMIT %s) AS n",
            (batch_id, self.brain_id, cap),
        ).fetchone()
        ops = self.conn.execute(
            "SELECT op, count(*) FROM (SELECT op FROM memgui_journal WHERE batch_id = %s "
            "AND brain_id = %s ORDER BY id LIMIT %s) AS first_rows GROUP BY op",
            (batch_id, self.brain_id, first_rows),
        ).fetchall()
        return (int(size[0]) if size else 0), {str(op): int(n) for op, n in ops}

    def batch_page(self, batch_id: str, after_id: int, limit: int) -> list[JournalEntry]:
        return postgres.batch_page(self.conn, self.brain_id, batch_id, after_id, limit)

    def trace_snapshot(self, trace_id: str) -> dict[str, Any] | None:
        row = postgres.fetch_row(self.conn, self.brain_id, trace_id)
        return store.row_to_snapshot(row) if row is not None else None

    def link_exists(self, from_id: Any, to_id: Any, kind: Any) -> bool:
        found = self.conn.execute(
            "SELECT 1 FROM memory_links WHERE brain_id = %s AND from_id = %s AND to_id = %s "
            "AND kind = %s",
            (self.brain_id, from_id, to_id, kind),
        ).fetchone()
        return found is not None
