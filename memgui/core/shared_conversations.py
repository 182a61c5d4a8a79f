"""A shared brain's imported conversations (`core/conversations.py`, the rules of a file):
the brain's side of it, which `SharedBrain` takes in. The rows are read in one read-only
snapshot of the server (`storage/conversation_rows.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from memgui.core import conversations
from memgui.core.errors import InvalidArgument
from memgui.core.model import Trace, check_id
from memgui.core.storage import conversation_rows, postgres_rows

if TYPE_CHECKING:
    import psycopg

    from memgui.core.storage.transaction import WriteBatch

# (op, before, after) of one row beside the traces: `before` None for a new row.
RowWrite = tuple[str, dict[str, Any] | None, dict[str, Any]]


class SharedConversations:
    """Mixed into `SharedBrain`, which has the connection, the brain id and `get`."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def get(self, trace_id: str) -> Trace:
        raise NotImplementedError  # SharedBrain's

    def writing(
        self,
        actor: str | None,
        kind: str = "edit",
        lock: str | None = None,
        order_late: bool = False,
    ) -> AbstractContextManager[WriteBatch]:
        raise NotImplementedError  # SharedTransactions'

    def keep_turn(
        self,
        conversation_id: str,
        rows_of: Callable[[int | None], Iterator[RowWrite]],
        actor: str | None = None,
    ) -> str:
        """Auto-ingest's raw turn (`core/ingest.py`): the rows `rows_of(updated_at of the
        conversation, None if new)` names, one journaled write; returns its batch id."""
        check_id("conversation_id", conversation_id, "conversation id")
        with self.writing(actor, "ingest") as batch:
            held = self.conn.execute(
                "SELECT updated_at FROM conversations WHERE brain_id = %s AND id = %s FOR UPDATE",
                (self.brain_id, conversation_id),
            ).fetchone()
            rows = list(rows_of(None if held is None else int(held[0])))
            for _op, _before, after in rows:
                _refuse_nul(after)
            for op, before, after in rows:
                if before is None:
                    postgres_rows.insert_row(self.conn, batch, self.brain_id, op, after)
                else:
                    postgres_rows.update_row(self.conn, batch, self.brain_id, op, before, after)
        return batch.batch_id

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        """A conversation with its messages in order (imported chats)."""
        check_id("conversation_id", conversation_id, "conversation id")
        rows = conversation_rows.postgres_rows(
            self.conn, self.brain_id, conversation_id, conversations.MAX_MESSAGES
        )
        return conversations.built(conversation_id, rows)

    def conversation_of(self, trace_id: str) -> dict[str, Any] | None:
        """The conversation a trace was imported from, or None."""
        return conversations.conversation_of(self, trace_id)


def _refuse_nul(row: dict[str, Any]) -> None:
    """PostgreSQL's text holds no NUL character, which a file's does: refused, the message
    named by its role (the `user` or `assistant` argument), before anything is written."""
    text = row.get("content")
    if isinstance(text, str) and "\x00" in text:
        name = str(row.get("role") or "content")
        raise InvalidArgument(
            name, f"must hold no NUL character on a PostgreSQL brain (got {text!r})", text
        )
