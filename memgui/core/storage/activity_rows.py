"""The SQL of agent activity on a brain file (`core/activity.py` has the rules;
`storage/postgres_activity.py` the same reads on PostgreSQL).

A batch is one transaction and SQLite lets one writer in at a time, so a batch's rows are
one run of journal ids, whatever brain id they hold: the walk goes over the file's journal
by its primary key and passes over other brains' rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memgui.core.model import JournalEntry
from memgui.core.storage import review_rows, store

if TYPE_CHECKING:
    from memgui.core.storage.db import Database, WriteBatch


class FileActivityRows:
    """Activity's reads (and the review mark's write, given the write's batch) on a file."""

    def __init__(
        self,
        db: Database,
        brain_id: str,
        batch_page: Callable[[str, int, int], list[JournalEntry]],
        batch: WriteBatch | None = None,
    ) -> None:
        self.db, self.conn, self.brain_id = db, db.conn, brain_id
        self.page_of = batch_page  # core.journal's, which makes changed-fields rows whole
        self.batch = batch

    def has_journal(self) -> bool:
        return "memgui_journal" in self.db.tables

    def mark(self) -> dict[str, Any]:
        return review_rows.read(self.db, self.brain_id)

    def write_mark(self, before: dict[str, Any], after: dict[str, Any]) -> None:
        assert self.batch is not None, "the review mark is written inside a write"
        review_rows.write(self.db, self.batch, self.brain_id, before, after)

    def count_after(
        self, through: int, actors: list[str], ops: list[str], skip: list[str], cap: int
    ) -> int:
        # `+brain_id`: the id range is the index to use, never the brain's whole journal.
        row = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memgui_journal WHERE id > ?1 AND +brain_id = ?2 "
            "AND actor NOT IN (SELECT value FROM json_each(?3)) "
            "AND op NOT IN (SELECT value FROM json_each(?4)) "
            "AND batch_id NOT IN (SELECT value FROM json_each(?5)) LIMIT ?6)",
            (through, self.brain_id, json.dumps(actors), json.dumps(ops), json.dumps(skip), cap),
        ).fetchone()
        return int(row[0]) if row else 0

    def newest(self, top: int, floor: int) -> tuple[int, str, str, str, int] | None:
        """The newest row with `floor < id <= top`: id, brain id, actor, batch id, time."""
        row = self.conn.execute(
            "SELECT id, brain_id, actor, batch_id, at FROM memgui_journal "
            "WHERE id <= ? AND id > ? ORDER BY id DESC LIMIT 1",
            (top, floor),
        ).fetchone()
        return None if row is None else (int(row[0]), row[1], row[2], row[3], int(row[4]))

    def oldest_after(self, after: int) -> tuple[int, str, str, str] | None:
        row = self.conn.execute(
            "SELECT id, brain_id, actor, batch_id FROM memgui_journal WHERE id > ? "
            "ORDER BY id LIMIT 1",
            (after,),
        ).fetchone()
        return None if row is None else (int(row[0]), row[1], row[2], row[3])

    def batch_end(self, batch_id: str, last: bool) -> int:
        order = "DESC" if last else ""
        row = self.conn.execute(
            f"SELECT id FROM memgui_journal WHERE batch_id = ? ORDER BY id {order} LIMIT 1",
            (batch_id,),
        ).fetchone()
        return int(row[0]) if row else 0

    def batch_summary(self, batch_id: str, cap: int, first_rows: int) -> tuple[int, dict[str, int]]:
        size = self.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memgui_journal WHERE batch_id = ? LIMIT ?)",
            (batch_id, cap),
        ).fetchone()
        ops = self.conn.execute(
            "SELECT op, count(*) FROM (SELECT op FROM memgui_journal WHERE batch_id = ? "
            "ORDER BY id LIMIT ?) GROUP BY op",
            (batch_id, first_rows),
        ).fetchall()
        counts: dict[str, int] = {}
        for op, n in ops:
            assert isinstance(n, int)  # count(*)
            counts[str(op)] = n
        return (int(size[0]) if size else 0), counts

    def batch_page(self, batch_id: str, after_id: int, limit: int) -> list[JournalEntry]:
        return self.page_of(batch_id, after_id, limit)

    def trace_snapshot(self, trace_id: str) -> dict[str, Any] | None:
        row = store.fetch_row(self.db, self.brain_id, trace_id)
        return store.row_to_snapshot(row) if row is not None else None

    def link_exists(self, from_id: Any, to_id: Any, kind: Any) -> bool:
        found = self.conn.execute(
            "SELECT 1 FROM memory_links WHERE brain_id = ? AND from_id = ? AND to_id = ? "
            "AND kind = ?",
            (self.brain_id, from_id, to_id, kind),
        ).fetchone()
        return found is not None
