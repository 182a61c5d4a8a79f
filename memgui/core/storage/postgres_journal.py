"""A PostgreSQL brain's journal rows: one `memgui_journal` row per change, noted on the batch
as what it changed (`storage/journal_rows.py` has the same on SQLite). Every module that
writes a shared brain's rows journals through here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.storage.journal_rows import event
from memgui.core.storage.json_text import dumps
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    import psycopg


def journal(
    conn: psycopg.Connection[tuple[Any, ...]],
    batch: WriteBatch,
    brain_id: str,
    op: str,
    trace_id: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> None:
    """One journal row, noted on the batch as what it changed (as `journal_rows.journal`)."""
    if batch.before_first_row is not None:  # the journal lock, just before the first row
        take_turn, batch.before_first_row = batch.before_first_row, None
        take_turn()
    conn.execute(
        "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
        "VALUES (%s, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, %s, %s, %s, %s, "
        "%s, %s)",
        (
            *(brain_id, batch.actor, batch.batch_id, op, trace_id),
            dumps(before) if before is not None else None,
            dumps(after) if after is not None else None,
        ),
    )
    batch.events.append(event(op, trace_id, before, after))
