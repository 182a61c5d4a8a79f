"""Reading a tool's arguments: one declaration gives the JSON Schema and the reader.

A tool declares its parameters as `Param`s. `read_params` turns what a client sent into plain
Python values in two steps, as agent-memory's serde layer and service seam do: a value that
cannot be the declared kind (a missing field, an unknown field, text where a number goes) is
a `ParameterError` ("failed to deserialize parameters: …", MCP `isError`, REST 400/422); a
value of the right kind but out of bounds is the tool's own `InvalidArgument`. Both name the
field and the value, and neither writes anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.model import shown

STRING, INTEGER, BOOLEAN, STRINGS, ID, IDS = "string", "integer", "boolean", "strings", "id", "ids"
NUMBER = "number"
_EXPECTED = {
    STRING: "a string",
    INTEGER: "an integer",
    NUMBER: "a number",
    BOOLEAN: "true or false",
    STRINGS: "an array of strings",
    ID: "an id (a string; a number is read as its digits)",
    IDS: "an array of ids",
}


class ParameterError(InvalidArgument):
    """Arguments that do not fit the tool's parameters at all; nothing was written."""

    def __init__(self, field: str, problem: str, value: object = None) -> None:
        super().__init__(field, problem, value)
        self.args = (f"failed to deserialize parameters: {problem}",)

    def __str__(self) -> str:
        return self.args[0]


@dataclass(frozen=True)
class Param:
    """One parameter: its JSON kind, whether it must be given, and what the schema says."""

    name: str
    kind: str
    description: str = ""
    required: bool = False
    nullable: bool = False  # null is a value of its own (merge-patch), not "left out"
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any]
        if self.kind in (STRINGS, IDS):
            out = {"type": "array", "items": {"type": "string"}}
        elif self.kind == ID:
            out = {"type": ["string", "integer"]}
        else:
            out = {"type": self.kind}
        if self.nullable:
            kinds = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*kinds, "null"]
        if self.enum is not None:
            out["enum"] = list(self.enum) + ([None] if self.nullable else [])
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if self.default is not None:
            out["default"] = self.default
        if self.description:
            out["description"] = self.description
        return out


def input_schema(params: Sequence[Param]) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments (unknown fields are refused)."""
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {p.name: p.schema() for p in params},
        "additionalProperties": False,
    }
    required = [p.name for p in params if p.required]
    if required:
        schema["required"] = required
    return schema


class Args(dict[str, Any]):
    """The values a client gave, by name; a left-out parameter is absent (`given` says)."""

    def given(self, name: str) -> bool:
        return name in self


def read_params(params: Sequence[Param], arguments: object) -> Args:
    """Check each argument's kind; ParameterError on the first that does not fit."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise ParameterError(
            "arguments", f"invalid type: {_kind_of(arguments)}, expected an object", arguments
        )
    by_name = {p.name: p for p in params}
    for key in arguments:
        if key not in by_name:
            expected = ", ".join(f"`{p.name}`" for p in params) or "no fields"
            name = key if _plain(key) else repr(key)
            raise ParameterError(name, f"unknown field `{name}`, expected one of {expected}", key)
    out = Args()
    for param in params:
        if param.name not in arguments:
            if param.required:
                raise ParameterError(param.name, f"missing field `{param.name}`")
            continue
        value = arguments[param.name]
        if value is None and not param.required and not param.nullable:
            continue  # an optional field sent as null reads as left out (serde's Option)
        out[param.name] = _read(param, value)
    return out


def _read(param: Param, value: object) -> Any:
    if value is None and param.nullable:
        return None
    kind, ok = param.kind, False
    if kind == STRING:
        ok = isinstance(value, str)
    elif kind == INTEGER:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == NUMBER:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif kind == BOOLEAN:
        ok = isinstance(value, bool)
    elif kind == ID:
        ok = _is_id(value)
    elif kind in (STRINGS, IDS):
        check = _is_id if kind == IDS else (lambda v: isinstance(v, str))
        if isinstance(value, list | tuple):
            for i, item in enumerate(value):
                if not check(item):
                    raise ParameterError(
                        f"{param.name}[{i}]",
                        f"invalid type for `{param.name}[{i}]`: {_kind_of(item)}, expected "
                        f"{_EXPECTED[ID if kind == IDS else STRING]}",
                        item,
                    )
            ok = True
    if not ok:
        raise ParameterError(
            param.name,
            f"invalid type for `{param.name}`: {_kind_of(value)}, expected {_EXPECTED[kind]}",
            value,
        )
    if kind in (STRINGS, IDS) and isinstance(value, list | tuple):
        return list(value)
    return value


def _plain(key: object) -> bool:
    """A field name a message can show as it is: printable text that encodes as UTF-8."""
    if not isinstance(key, str) or not key.isprintable() or len(key) > 80:
        return False
    try:
        key.encode()
    except UnicodeEncodeError:
        return False
    return True


def _is_id(value: object) -> bool:
    # A number is an id by its digits, within 64 bits as agent-memory's ids are.
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() <= 64
    return isinstance(value, str)


def _kind_of(value: object) -> str:
    """A value as a message names it: its JSON kind and (short) its value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{shown(value)}`"
    if isinstance(value, float):
        text = repr(value) if math.isfinite(value) else str(value)
        return f"floating point `{text}`"
    if isinstance(value, str):
        return f"string {value[:80]!r}" + ("…" if len(value) > 80 else "")
    if isinstance(value, list | tuple):
        return "a sequence"
    if isinstance(value, Mapping):
        return "a map"
    return type(value).__name__


def id_text(value: int | str) -> str:
    """An id as the brain keys it: a number a client sent is looked up by its digits."""
    return value if isinstance(value, str) else str(value)
