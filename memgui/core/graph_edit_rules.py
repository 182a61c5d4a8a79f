"""What the graph view's edits check, on either engine (`graph_edits`, `shared_graph_edits`)."""

from __future__ import annotations

from memgui.core.errors import InvalidArgument
from memgui.core.model import check_id, check_text

MEMORY_GRAPH = "memory_graph"  # AgentOS's node standing for a trace: its id is the trace's


def edge_type_of(value: object) -> str:
    """An edge's type, checked."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument("type", f"must be a non-empty string (got {value!r})", value)
    return check_text("type", value)


def checked_merge(ids: object, survivor: object) -> list[str]:
    """A merge's node ids, checked, each once in their order; `survivor` one of them."""
    if isinstance(ids, str) or not isinstance(ids, list | tuple):
        raise InvalidArgument("ids", f"must be a list of node ids (got {ids!r:.80})", ids)
    for i, node_id in enumerate(ids):
        check_id(f"ids[{i}]", node_id, "node id")
    unique = list(dict.fromkeys(ids))
    if len(unique) < 2:
        raise InvalidArgument("ids", f"must name at least 2 different nodes (got {list(ids)})")
    if survivor not in unique:
        raise InvalidArgument("survivor", f"must be one of ids (got {survivor!r})", survivor)
    return unique
