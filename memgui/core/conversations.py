"""Imported conversations (AgentOS `conversations` / `messages`) as a trace's context, on
either engine (`Brain.conversation`, `SharedBrain.conversation`; their rows are read in
`storage/conversation_rows.py`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from memgui.core.errors import NotFound
from memgui.core.model import Trace, check_id
from memgui.core.storage import conversation_rows

if TYPE_CHECKING:
    from memgui.core.brain import Brain

MAX_MESSAGES = 2000


class ConversationReader(Protocol):
    def get(self, trace_id: str) -> Trace: ...

    def conversation(self, conversation_id: str) -> dict[str, Any]: ...


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def conversation(brain: Brain, conversation_id: str) -> dict[str, Any]:
    check_id("conversation_id", conversation_id, "conversation id")
    with brain.db.lock:
        rows = conversation_rows.file_rows(
            brain.db.conn, brain.brain_id, conversation_id, MAX_MESSAGES
        )
    return built(conversation_id, rows)


def built(conversation_id: str, rows: conversation_rows.Rows) -> dict[str, Any]:
    """The conversation of its rows (either engine's), or `NotFound` without its head."""
    head, messages = rows
    if head is None:
        raise NotFound(conversation_id, "conversation")
    return {
        "id": head[0],
        "title": head[1],
        "created_at": head[2],
        "updated_at": head[3],
        "metadata": _json(head[4]),
        "messages": [
            {"id": m[0], "role": m[1], "content": m[2], "created_at": m[3], "metadata": _json(m[4])}
            for m in messages
        ],
    }


def conversation_of(brain: ConversationReader, trace_id: str) -> dict[str, Any] | None:
    """The conversation `trace_id` was imported from (its `metadata.conversation_id`), or
    None; `brain` is either engine's facade."""
    trace = brain.get(trace_id)
    conversation_id = trace.metadata.get("conversation_id")
    if not isinstance(conversation_id, str) or not conversation_id:
        return None
    try:
        return brain.conversation(conversation_id)
    except NotFound:
        return None
