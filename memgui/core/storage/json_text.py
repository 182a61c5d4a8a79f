"""JSON columns as AgentOS writes them (its JSON.stringify): compact, non-ASCII kept."""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: Any) -> str:
    """JSON as AgentOS's JSON.stringify writes it: compact, non-ASCII kept."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # what orjson refuses (huge ints, odd keys), json still writes
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
