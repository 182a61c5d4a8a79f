"""How the app names a memory wherever it mentions one: its title, else the start of its
text — never a raw id, which tells a person nothing.

A title is the core's (`title_of`: `metadata.title`, a note's title, a conversation's):
when a memory has one, that is its name. Names are cut for a line of the history or a
message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgui.core.model import Trace, title_of

NAME_CHARS = 60
GONE = "a memory no longer in the brain"


def memory_name(content: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The title in `metadata`, else the first line of `content`, cut to `NAME_CHARS`."""
    title = title_of(dict(metadata) if metadata is not None else None)
    text = title or next((line.strip() for line in content.splitlines() if line.strip()), "")
    if not text:
        return "(empty)"
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 1].rstrip() + "…"


def name_of(trace: Trace) -> str:
    return memory_name(trace.content, trace.metadata)


def name_of_state(state: Mapping[str, Any] | None) -> str:
    """The name of a memory as a journal row kept it (its content and metadata then)."""
    if not state:
        return GONE
    metadata = state.get("metadata")
    content = state.get("content")
    return memory_name(
        content if isinstance(content, str) else "",
        metadata if isinstance(metadata, Mapping) else None,
    )
