"""Hypothesis strategies that damage valid input: bytes, JSON-like trees, CSV cells.

Each mutation starts from a valid seed and changes a few things in it, so most cases get far
into a reader before something odd meets it: values of the wrong type, times past 64 bits,
nesting far deeper than any export writes, huge strings, NUL bytes, text that is not UTF-8.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class Raw:
    """JSON text put in as it is (nesting deeper than `json` can write, invalid escapes)."""

    text: str


def deep(depth: int, opening: str = "[") -> Raw:
    closing = "]" if opening == "[" else "}"
    inner = "1" if opening == "[" else '"k": 1'
    head = opening if opening == "[" else '{"k": '
    return Raw(head * depth + inner + closing * depth)


ODD_TEXTS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",  # a lone surrogate: no UTF-8 can hold it
    "\ufeff",
    "\u202e",
    "\r\n",
    "../../etc/passwd",
    "[[Target|Alias]]",
    "![[embed.png]]",
    "#tag",
    "---",
    "%%",
    "```",
    "{{date}}",
    "mt_00000000-0000-4000-8000-000000000001",
    "1970-01-01",
    "2023-02-30",
    "nan",
    "inf",
    "-0",
    "1e400",
    "99999999999999999999999",
    "DECISION",
    "semantic",
    "user",
    "relates_to",
    "x" * 5000,
]
ODD_NUMBERS = [
    0,
    -1,
    1,
    2**31,
    2**53 + 1,
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64 - 1,
    1.5,
    -0.0,
    1e17,
    9.2e18,
    1e308,
    -1e308,
    5e-324,
]
HUGE = [Raw(json.dumps("x" * 300_000)), Raw(json.dumps("é" * 100_000))]
DEEP = [
    deep(n, opening) for n in (40, 100, 254, 255, 300, 1023, 1024, 1025, 10_000) for opening in "[{"
]
BROKEN_JSON = [
    Raw('"\\ud800"'),
    Raw('"\\u0000"'),
    Raw("NaN"),
    Raw("Infinity"),
    Raw("1e400"),
    Raw("["),
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(ODD_NUMBERS),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(ODD_TEXTS),
    st.text(max_size=30),
)
odd_values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(
        st.sampled_from(["id", "content", "text", "role", "x", ""]), scalars, max_size=3
    ),
    st.sampled_from(DEEP),
    st.sampled_from(HUGE),
    st.sampled_from(BROKEN_JSON),
)


def paths(tree: Any) -> list[tuple[Any, ...]]:
    """Every place in a JSON-like tree, the root first."""
    found: list[tuple[Any, ...]] = [()]
    stack: list[tuple[tuple[Any, ...], Any]] = [((), tree)]
    while stack:
        path, node = stack.pop()
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in items:
            found.append((*path, key))
            stack.append(((*path, key), child))
    return found


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        tree = tree[key]
    return tree


@st.composite
def mutated_tree(draw: st.DrawFn, seed: Any, most: int = 4) -> Any:
    """A deep copy of `seed` with 1..`most` places replaced, removed, repeated or added to."""
    tree = copy.deepcopy(seed)
    for _ in range(draw(st.integers(1, most))):
        places = [p for p in paths(tree) if p]
        if not places:
            return draw(odd_values)
        path = draw(st.sampled_from(places))
        parent, key = _parent(tree, path), path[-1]
        action = draw(
            st.sampled_from(["replace", "replace", "replace", "remove", "repeat", "add", "wrap"])
        )
        if action == "replace":
            parent[key] = draw(odd_values)
        elif action == "remove":
            del parent[key]
        elif action == "repeat" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif action == "add" and isinstance(parent[key], dict):
            parent[key][
                draw(st.sampled_from(["id", "content", "mapping", "message", "extra", "metadata"]))
            ] = draw(odd_values)
        elif action == "add" and isinstance(parent[key], list):
            parent[key].append(draw(odd_values))
        elif action == "wrap":
            parent[key] = draw(st.sampled_from([[parent[key]], {"value": parent[key]}]))
    return tree


def to_json(value: Any) -> str:
    """JSON text of a tree that may hold `Raw` pieces; lone surrogates written as escapes."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(to_json(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "NaN"
    return json.dumps(value)


def utf8(text: str) -> bytes:
    """Text as bytes; a lone surrogate becomes bytes no UTF-8 reader takes."""
    return text.encode("utf-8", "surrogatepass")


BYTE_TOKENS = [
    b"\x00",
    b"\xff",
    b"\xc3",  # a UTF-8 sequence cut short
    b"\xed\xa0\x80",  # a surrogate written as UTF-8
    b"\r",
    b"\n",
    b"\r\n",
    b'"',
    b",",
    b"\\",
    b"{",
    b"[",
    b"[" * 2000,
    b"x" * 200_000,  # a long line
]


@st.composite
def mutated_bytes(draw: st.DrawFn, data: bytes, tokens: list[bytes], most: int = 3) -> bytes:
    """`data` with 1..`most` byte edits: flip, insert a token or noise, cut, repeat, truncate."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, most))):
        at = draw(st.integers(0, len(out)))
        action = draw(
            st.sampled_from(["token", "token", "noise", "flip", "cut", "repeat", "truncate"])
        )
        if action == "token":
            out[at:at] = draw(st.sampled_from(tokens + BYTE_TOKENS))
        elif action == "noise":
            out[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "flip" and at < len(out):
            out[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "cut":
            del out[at : at + draw(st.integers(1, 64))]
        elif action == "repeat":
            span = bytes(out[at : at + draw(st.integers(1, 256))])
            out[at:at] = span * draw(st.integers(1, 20))
        elif action == "truncate":
            del out[at:]
    return bytes(out)
