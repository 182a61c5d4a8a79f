"""JSON values a record may hold, bounded in how deep they nest.

orjson parses up to 1,024 levels but writes only 254, and Python's `json` recurses until the
interpreter's stack gives out (about 1,000): a value nested in between is read by the plan
and kills the commit that writes it, or kills the plan itself. No export writes more than a
few levels, so a value nested deeper than `MAX_JSON_DEPTH` refuses its record, naming the
field and the bound.
"""

from __future__ import annotations

from typing import Any

import orjson

from memgui.core.errors import InvalidArgument

MAX_JSON_DEPTH = 64


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when lists and objects nest more than `limit` levels in `value` (no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = (
            node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        )
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def check_nesting(field_name: str, value: Any) -> Any:
    """`value`, or InvalidArgument when it nests deeper than MAX_JSON_DEPTH."""
    if isinstance(value, dict | list) and too_deep(value):
        raise InvalidArgument(
            field_name, f"nests deeper than {MAX_JSON_DEPTH} levels of arrays and objects", None
        )
    return value


def load_value(field_name: str, text: str | bytes) -> Any:
    """A JSON text's value; InvalidArgument when it is not JSON or nests too deep.

    The reason names orjson's finding (`is not valid JSON (…)`), the value is the text.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise InvalidArgument(field_name, f"is not valid JSON ({error})", text) from None
    if isinstance(value, dict | list):
        if isinstance(text, str):
            openings = text.count("[") + text.count("{")
        else:
            openings = text.count(b"[") + text.count(b"{")
        if openings > MAX_JSON_DEPTH:  # fewer cannot nest that deep: no walk
            check_nesting(field_name, value)
    return value
