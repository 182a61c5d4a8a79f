"""Generated ChatGPT conversations (the `conversations.json` shape) for tests and benchmarks."""

from __future__ import annotations

from typing import Any

START_S = 1_767_225_600  # 2026-01-01, seconds as ChatGPT writes them


def linear_conversation(number: int, texts: list[str], conversation_id: str) -> dict[str, Any]:
    """Conversation `number`: one message per text, user and assistant in turn, no branches."""
    start = START_S + number * 60
    mapping: dict[str, Any] = {"root": {"id": "root", "parent": None, "children": []}}
    parent = "root"
    for turn, text in enumerate(texts):
        node = f"n{turn}"
        mapping[parent]["children"].append(node)
        mapping[node] = {
            "id": node,
            "parent": parent,
            "children": [],
            "message": {
                "id": node,
                "author": {"role": "user" if turn % 2 == 0 else "assistant"},
                "create_time": start + turn,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {},
                "recipient": "all",
            },
        }
        parent = node
    return {
        "title": f"Conversation {number}",
        "create_time": start,
        "update_time": start + len(texts),
        "conversation_id": conversation_id,
        "current_node": parent,
        "mapping": mapping,
    }
