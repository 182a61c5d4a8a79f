"""How the app names a memory wherever it mentions one: its title, else the start of its
text — never a raw id, which tells a person nothing. The rule is the core's
(`Trace.label`: `metadata.title`, else `summary_of` the text); here names are cut shorter,
for a line of the history or a message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memgui.core.model import Trace, summary_of, title_of

NAME_CHARS = 60
GONE = "a memory no longer in the brain"


def memory_name(content: str, metadata: Mapping[str, Any] | None = None) -> str:
    """The title in `metadata`, else the start of `content`'s first line, in `NAME_CHARS`."""
    title = title_of(dict(metadata) if metadata is not None else None)
    if title is None:
        return summary_of(content, NAME_CHARS) or "(empty)"
    return title if len(title) <= NAME_CHARS else title[: NAME_CHARS - 1].rstrip() + "…"


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
