"""Checking the lines of an agent-memory JSONL export (format v1), strictly.

Each line is one JSON object tagged `header`, `memory` or `link`; `_check_line` raises a
`_Defect` naming the line, the field and the value at the first thing the format does not
allow. The common case (a line shaped as every other) is answered per field-name and
value-type signature, without a check per field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from memgui.core.io.readers.text_utils import INT64
from memgui.core.model import CATEGORIES, DAY_MS, LINK_KINDS, PINNED_CATEGORIES

FORMAT = "agent-memory-export"
READS_UP_TO_VERSION = 1
HALF_LIFE_MS = 30 * DAY_MS
PINNED_HALF_LIFE_MS = 180 * DAY_MS
# The memgui trace type an agent-memory category reads as.
CATEGORY_TYPES = {
    "DECISION": "semantic",
    "ARCHITECTURE": "semantic",
    "CONSTRAINT": "semantic",
    "PATTERN": "procedural",  # how things are done here
    "ERROR": "episodic",  # something that happened
    "TODO": "prospective",  # something to do later
}
TAGS = ("header", "memory", "link")
MEMORY_TIMES = ("created_at", "last_accessed", "expires_at")

# field -> (required, allowed JSON types); the wire order of format v1.
HEADER_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "format": (True, (str,)),
    "version": (True, (int,)),
    "exported_at": (True, (int,)),
    "embedding_model": (True, (str,)),
    "embedding_dim": (True, (int,)),
    "schema_version": (True, (int,)),
    "agent_memory_version": (True, (str,)),
    "exported_rows": (True, (int,)),
    "exported_links": (True, (int,)),
}
MEMORY_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "key": (True, (int,)),
    "type": (True, (str,)),
    "content": (True, (str,)),
    "tags": (True, (list,)),
    "source": (False, (str, type(None))),
    "scope": (False, (str, type(None))),
    "created_at": (True, (int,)),
    "last_accessed": (True, (int,)),
    "access_count": (True, (int,)),
    "expires_at": (False, (int, type(None))),
}
LINK_FIELDS: dict[str, tuple[bool, tuple[type, ...]]] = {
    "record": (True, (str,)),
    "from": (True, (int,)),
    "to": (True, (int,)),
    "kind": (True, (str,)),
    "created_at": (True, (int,)),
}
SHAPES = {"header": HEADER_FIELDS, "memory": MEMORY_FIELDS, "link": LINK_FIELDS}


def stability_ms(category: str) -> int:
    """The e-folding time (ms) whose decay equals agent-memory's half-life decay."""
    half_life = PINNED_HALF_LIFE_MS if category in PINNED_CATEGORIES else HALF_LIFE_MS
    return round(half_life / math.log(2))


class _Defect(Exception):
    def __init__(self, line: int, message: str, field_name: str | None = None, value: Any = None):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.field_name = field_name
        self.value = value


@dataclass
class _Check:
    """What checking the lines learned about the file."""

    defects: list[_Defect] = field(default_factory=list)
    header: dict[str, Any] | None = None
    keys: dict[int, int] = field(default_factory=dict)  # key -> line
    memories: int = 0
    links: int = 0
    clean_memories: int = 0  # memory lines without a defect of their own
    untagged: int = 0  # lines that could not be told a memory or a link: nothing to count
    newer_version: int | None = None


TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", list: "an array"}
TYPE_NAMES.update({type(None): "null", bool: "a boolean", dict: "an object"})


def _json_type_name(value: Any) -> str:
    return TYPE_NAMES.get(type(value), "an object")


_FastShape = tuple[frozenset[str], frozenset[str], dict[str, tuple[type, ...]]]


def _exact_types(shape: dict[str, tuple[bool, tuple[type, ...]]]) -> _FastShape:
    required = frozenset(name for name, (needed, _) in shape.items() if needed)
    return frozenset(shape), required, {name: types for name, (_, types) in shape.items()}


FAST_SHAPES = {tag: _exact_types(shape) for tag, shape in SHAPES.items()}
_SEEN_SHAPES: dict[tuple[str, tuple[str, ...], tuple[type, ...]], bool] = {}


def _fits(obj: dict[str, Any], tag: str) -> bool:
    """Known fields, the required ones there, each of an allowed type: the common case.

    orjson gives exact built-in types, so `type(value) in types` is `isinstance` without
    bool. An exporter writes every line alike, so the answer is kept per field names and
    value types: two tuples built in C instead of a check per field.
    """
    signature = (tag, tuple(obj), tuple(map(type, obj.values())))
    known = _SEEN_SHAPES.get(signature)
    if known is None:
        allowed, required, types = FAST_SHAPES[tag]
        keys = obj.keys()
        known = keys <= allowed and required <= keys
        known = known and all(type(value) in types[name] for name, value in obj.items())
        if len(_SEEN_SHAPES) > 1000:  # a file of odd lines: keep the memory bounded
            _SEEN_SHAPES.clear()
        _SEEN_SHAPES[signature] = known
    return known


def _check_shape(line: int, obj: dict[str, Any], tag: str) -> None:
    if _fits(obj, tag):
        return
    shape = SHAPES[tag]  # something is wrong: find the first defect, as the format lists them
    for name in obj:
        if name not in shape:
            expected = ", ".join(shape)
            raise _Defect(line, f"unknown field `{name}`, expected one of {expected}", name)
    for name, (required, types) in shape.items():
        if name not in obj:
            if required:
                raise _Defect(line, f"missing field `{name}`", name)
            continue
        value = obj[name]
        wrong_bool = isinstance(value, bool) and bool not in types
        if wrong_bool or not isinstance(value, types):
            want = " or ".join(TYPE_NAMES[t] for t in types)
            raise _Defect(
                line, f"`{name}` must be {want} (got {_json_type_name(value)})", name, value
            )


def _check_line(state: _Check, line: int, obj: Any) -> None:
    if type(obj) is dict and obj.get("record") == "memory" and line != 1:
        # Most lines: a memory (as below, in the same order, with fewer calls).
        state.memories += 1
        key = obj.get("key")
        if type(key) is int:
            first = state.keys.get(key)
            if first is not None:
                raise _Defect(line, f"duplicate key {key} (first on line {first})", "key", key)
            state.keys[key] = line
        if not _fits(obj, "memory"):
            _check_shape(line, obj, "memory")
        _check_memory(line, obj)
        return
    if not isinstance(obj, dict):
        state.untagged += 1
        raise _Defect(line, f"not a JSON object (got {_json_type_name(obj)})")
    tag = obj.get("record")
    if tag not in TAGS:
        state.untagged += 1
        raise _Defect(
            line, f"unknown record tag {tag!r}, expected one of header, memory, link", "record", tag
        )
    if line == 1 and tag != "header":
        raise _Defect(line, "the first line must be the header record", "record", tag)
    if tag == "header" and line != 1:
        raise _Defect(line, "a second header record", "record", tag)
    # Counted and keyed before the checks, so one defect does not report others after it.
    if tag == "memory":
        state.memories += 1
        key = obj.get("key")
        if isinstance(key, int) and not isinstance(key, bool) and key in state.keys:
            first = state.keys[key]
            raise _Defect(line, f"duplicate key {key} (first on line {first})", "key", key)
        if isinstance(key, int) and not isinstance(key, bool):
            state.keys[key] = line
    elif tag == "link":
        state.links += 1
    if tag == "header" and isinstance(obj.get("version"), int) and obj["version"] > 1:
        state.newer_version = obj["version"]  # read no further: the format is not ours
        return
    _check_shape(line, obj, tag)
    if tag == "header":
        if obj["format"] != FORMAT:
            raise _Defect(line, f"format must be {FORMAT} (got {obj['format']!r})", "format")
        if obj["version"] < 1:
            raise _Defect(line, f"version must be a positive integer (got {obj['version']})")
        state.header = obj
    elif tag == "memory":
        _check_memory(line, obj)
    else:
        if obj["kind"] not in LINK_KINDS:
            allowed = ", ".join(LINK_KINDS)
            raise _Defect(line, f"unknown kind {obj['kind']!r}, expected one of {allowed}", "kind")
        if obj["from"] == obj["to"]:
            raise _Defect(line, f"a link from key {obj['from']} to itself", "to", obj["to"])
        _check_seconds(line, "created_at", obj["created_at"])


_CATEGORY_SET = frozenset(CATEGORIES)


def _check_memory(line: int, obj: dict[str, Any]) -> None:
    """The values of a memory line of the right shape."""
    if obj["type"] not in _CATEGORY_SET:
        allowed = ", ".join(CATEGORIES)
        raise _Defect(line, f"unknown type {obj['type']!r}, expected one of {allowed}", "type")
    content = obj["content"]
    if not content or content.isspace():  # no copy, unlike strip()
        raise _Defect(line, "content must not be empty", "content", content)
    tags = obj["tags"]
    for tag in tags:
        if type(tag) is not str or not tag or tag.isspace():
            _check_tags(line, tags)  # the defect, named as the format lists them
    if not 0 <= obj["access_count"] < INT64:
        raise _Defect(
            line, f"access_count must be between 0 and 2**63 - 1 (got {obj['access_count']})"
        )
    for name in MEMORY_TIMES:
        value = obj.get(name)
        if value is not None and not -INT64 <= value * 1000 < INT64:
            _check_seconds(line, name, value)  # raises, naming the field


def _check_tags(line: int, tags: list[Any]) -> None:
    if not all(isinstance(tag, str) for tag in tags):
        raise _Defect(line, "tags must be an array of strings", "tags", tags)
    for index, tag in enumerate(tags):
        if not tag or tag.isspace():  # memgui holds no blank tag: the commit would refuse it
            where = f"tags[{index}]"
            raise _Defect(line, f"{where} must be a non-empty string (got {tag!r})", where, tag)


def _check_seconds(line: int, name: str, value: int | None) -> None:
    """A time in seconds that stays within SQLite's 64-bit integers in milliseconds."""
    if value is not None and not -INT64 <= value * 1000 < INT64:
        raise _Defect(
            line, f"`{name}` must be seconds within ±2**63 milliseconds (got {value})", name, value
        )
