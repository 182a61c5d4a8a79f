"""Imported conversations (AgentOS `conversations` / `messages`) as a trace's context."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memgui.core.errors import NotFound
from memgui.core.model import check_id

if TYPE_CHECKING:
    from memgui.core.brain import Brain

MAX_MESSAGES = 2000


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def conversation(brain: Brain, conversation_id: str) -> dict[str, Any]:
    check_id("conversation_id", conversation_id, "conversation id")
    with brain.db.lock:
        head = brain.db.conn.execute(
            "SELECT id, title, created_at, updated_at, metadata FROM conversations "
            "WHERE brain_id = ? AND id = ?",
            (brain.brain_id, conversation_id),
        ).fetchone()
        if head is None:
            raise NotFound(conversation_id, "conversation")
        messages = brain.db.conn.execute(
            "SELECT id, role, content, created_at, metadata FROM messages "
            "WHERE brain_id = ? AND conversation_id = ? ORDER BY created_at, rowid LIMIT ?",
            (brain.brain_id, conversation_id, MAX_MESSAGES),
        ).fetchall()
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


def conversation_of(brain: Brain, trace_id: str) -> dict[str, Any] | None:
    trace = brain.get(trace_id)
    conversation_id = trace.metadata.get("conversation_id")
    if not isinstance(conversation_id, str) or not conversation_id:
        return None
    try:
        return conversation(brain, conversation_id)
    except NotFound:
        return None
