"""Reverting a batch of a shared brain, whole or in part, with the rules of a file
(`core/journal.py`): the same choice of rows (`entry_ids` with the rows that went with a
trace's removal), the same conflicts (`journal.trace_undo`, `shared_links.undo`, and the
graph rows' in `storage/postgres_graph.undo`), one new batch that can be reverted in turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memgui.core import journal, shared_links
from memgui.core.errors import Conflict, InvalidArgument, NotFound, NotOnPostgres
from memgui.core.model import Changes, JournalEntry
from memgui.core.storage import (
    journal_rows,
    postgres,
    postgres_graph,
    postgres_links,
    postgres_rows,
    review_rows,
    store,
)
from memgui.core.storage.transaction import WriteBatch

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain


def revert(
    brain: SharedBrain, batch_id: str, actor: str | None, entry_ids: list[int] | None
) -> Changes:
    if not isinstance(batch_id, str) or not batch_id:
        raise InvalidArgument("batch_id", f"must be a batch id (got {batch_id!r})", batch_id)
    wanted = journal.check_entry_ids(entry_ids)
    with brain.writing(actor, "revert") as batch:
        entries = brain.batch_entries(batch_id)
        if not entries:
            raise NotFound(batch_id, "batch")
        if wanted is not None:
            entries = journal.chosen_entries(batch_id, entries, wanted)
        for entry in reversed(entries):
            _undo(brain, batch, entry)
    return batch.changes()


def _undo(brain: SharedBrain, batch: WriteBatch, entry: JournalEntry) -> None:
    conn, bid = brain.conn, brain.brain_id
    if entry.op in ("link", "unlink"):
        shared_links.undo(conn, batch, bid, entry)
        return
    if entry.op in postgres_graph.GRAPH_OPS:
        postgres_graph.undo(conn, bid, batch, entry)
        return
    if entry.op in journal_rows.ROW_OPS:  # an import's documents, conversations …
        postgres_rows.undo(conn, bid, batch, entry)
        return
    if entry.op in _NOT_HELD:  # a row kind a shared brain does not hold yet
        raise NotOnPostgres(f"reverting a batch's {entry.op!r} rows")
    row = postgres.fetch_row(conn, bid, entry.trace_id, lock=True)
    current = store.row_to_snapshot(row) if row is not None else None
    action, restored = journal.trace_undo(entry, current, brain.now())
    if action == "delete":
        if postgres_links.has_links(conn, bid, entry.trace_id):
            # linked since: removing it would drop the links
            raise Conflict.because(
                entry.trace_id, f"trace {entry.trace_id} was linked since the batch"
            )
        postgres.delete_trace(conn, batch, bid, restored, "revert")
    elif action == "insert":
        postgres.insert_trace(conn, batch, bid, restored, op="revert")
    else:
        assert current is not None
        postgres.update_trace(conn, batch, bid, current, restored, "revert")


# Review marks live in a file alone so far.
_NOT_HELD = frozenset({review_rows.OP})
