"""A shared brain's archive of verbatim texts (`core/archive.py`, the rules of a file):
`rehydrate_memory` reads `archived_traces` on the server, checks the stored SHA-256 as on a
file, and notes the access in `archive_access_log` (bookkeeping: no journal row, no version
bump). `SharedBrain` takes it in."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from memgui.core import archive
from memgui.core.model import check_id

if TYPE_CHECKING:
    import psycopg

    from memgui.core.storage.transaction import WriteBatch


class SharedArchive:
    """Mixed into `SharedBrain`, which has the connection, the brain id and `writing`."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def now(self) -> int:
        raise NotImplementedError  # SharedTransactions'

    def writing(
        self,
        actor: str | None,
        kind: str = "edit",
        lock: str | None = None,
        order_late: bool = False,
    ) -> AbstractContextManager[WriteBatch]:
        raise NotImplementedError  # SharedTransactions'

    def rehydrate(self, trace_id: str) -> archive.Archived:
        """The original text of an archived trace, or nothing (not archived, or altered)."""
        check_id("traceId", trace_id)
        # The access is noted in the read's own transaction: one round of the server, and
        # no journal turn taken (`order_late`: nothing here is journaled).
        with self.writing(None, "recall", order_late=True):
            row = self.conn.execute(
                "SELECT verbatim_content, content_hash, archived_at FROM archived_traces "
                "WHERE brain_id = %s AND trace_id = %s",
                (self.brain_id, trace_id),
            ).fetchone()
            found = archive.verified(row)
            if found.verbatim_content is not None:
                self.conn.execute(
                    "INSERT INTO archive_access_log "
                    "(brain_id, trace_id, accessed_at, request_context) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.brain_id, trace_id, self.now(), archive.REQUEST_CONTEXT),
                )
        return found
