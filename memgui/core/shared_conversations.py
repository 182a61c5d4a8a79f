"""A shared brain's imported conversations (`core/conversations.py`, the rules of a file):
the brain's side of it, which `SharedBrain` takes in. The rows are read in one read-only
snapshot of the server (`storage/conversation_rows.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import conversations
from memgui.core.model import Trace, check_id
from memgui.core.storage import conversation_rows

if TYPE_CHECKING:
    import psycopg


class SharedConversations:
    """Mixed into `SharedBrain`, which has the connection, the brain id and `get`."""

    conn: psycopg.Connection[tuple[Any, ...]]
    brain_id: str

    def get(self, trace_id: str) -> Trace:
        raise NotImplementedError  # SharedBrain's

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
