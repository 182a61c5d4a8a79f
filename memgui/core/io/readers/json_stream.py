"""The items of a big top-level JSON array, parsed one at a time.

Parsing a whole `conversations.json` builds Python objects worth about four times the file;
reading it item by item keeps memory near the size of the largest item. Each item is parsed
by orjson from a window of the file: orjson stops at the end of the first value and reports
"unexpected content after document" at the character where the next one starts, which gives
the item's end without a scanner of our own. A window too small for the item grows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from memgui.core.io.readers.agentos_reader import load_json

FIRST_WINDOW = 64 * 1024
WHITESPACE = b" \t\r\n"
BOM = b"\xef\xbb\xbf"
# orjson's message for a value followed by more text (older releases said the latter).
AFTER_VALUE = ("unexpected content after document", "trailing characters")


class JsonStreamError(ValueError):
    """The file is not valid JSON; the message names the byte offset."""


class NestedTooDeep(ValueError):
    """An item nested deeper than orjson parses (1,024 levels), given in its place: it is
    skipped whole and the items after it are read."""


DEPTH_LIMIT = "depth limit exceeded"  # orjson's message past 1,024 levels
# A string (an unterminated one runs to the end of the window) or a bracket.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)|[\[\]{}]', re.DOTALL)


def first_byte(path: Path) -> bytes:
    """The first significant byte of a JSON file (after a BOM and whitespace), or b''."""
    with path.open("rb") as handle:
        return _significant(handle, _start(handle))[1]


def iter_array(path: Path) -> Iterator[tuple[Any, int]]:
    """Each item of the file's top-level array and the offset after it (JsonStreamError if
    the file is not an array; a NestedTooDeep in place of an item nested past orjson)."""
    with path.open("rb") as handle:
        position, byte = _significant(handle, _start(handle))
        if byte != b"[":
            raise JsonStreamError(f"expected a JSON array at byte {position}, found {byte!r}")
        position, byte = _significant(handle, position + 1)
        if byte == b"]":
            return
        window = FIRST_WINDOW
        while True:
            value, end = _value_at(handle, position, window)
            window = max(FIRST_WINDOW, 2 * (end - position))  # items of one file look alike
            yield value, end
            position, byte = _significant(handle, end)
            if byte == b",":
                position, _ = _significant(handle, position + 1)
                continue
            if byte == b"]":
                rest, tail = _significant(handle, position + 1)
                if tail:
                    raise JsonStreamError(f"unexpected content after the array at byte {rest}")
                return
            raise JsonStreamError(f"expected ',' or ']' at byte {position}, found {byte!r}")


def _start(handle: BinaryIO) -> int:
    handle.seek(0)
    return len(BOM) if handle.read(len(BOM)) == BOM else 0


def _significant(handle: BinaryIO, position: int) -> tuple[int, bytes]:
    """Position and value of the next byte that is not whitespace (b'' at the end)."""
    while True:
        handle.seek(position)
        chunk = handle.read(4096)
        if not chunk:
            return position, b""
        stripped = chunk.lstrip(WHITESPACE)
        if stripped:
            return position + len(chunk) - len(stripped), stripped[:1]
        position += len(chunk)


def _whole_characters(data: bytes) -> bytes:
    """Drop a UTF-8 sequence the window cut in two (orjson checks the whole input)."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # ASCII or the lead byte of a sequence
            needed = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0xE else 4
            return data if needed <= back else data[:-back]
    return data


def _value_at(handle: BinaryIO, position: int, window: int) -> tuple[Any, int]:
    """The JSON value starting at `position`, and the offset just after it."""
    while True:
        handle.seek(position)
        data = handle.read(window)
        at_end = len(data) < window
        if not at_end:
            data = _whole_characters(data)
        try:
            return load_json(data), position + len(data)
        except orjson.JSONDecodeError as exc:
            if exc.msg == DEPTH_LIMIT:
                end = _end_of_value(handle, position)
                if end is not None:
                    reason = f"the item at byte {position} nests deeper than 1,024 levels"
                    return NestedTooDeep(reason), end
            if exc.msg in AFTER_VALUE:
                # exc.pos counts characters; the value ends before that character.
                end = len(data.decode("utf-8")[: exc.pos].encode("utf-8"))
                try:
                    return load_json(data[:end]), position + end
                except orjson.JSONDecodeError:
                    pass  # not where it said: read a bigger window
            if at_end:
                raise JsonStreamError(
                    f"invalid JSON in the item at byte {position}: {exc}"
                ) from None
        window *= 4


def _end_of_value(handle: BinaryIO, position: int) -> int | None:
    """The offset after the array or object starting at `position`, found by counting its
    brackets outside strings (orjson will not parse it); None when it never closes."""
    window = FIRST_WINDOW
    while True:
        handle.seek(position)
        data = handle.read(window)
        depth = 0
        for token in _TOKEN.finditer(data):
            bracket = token.group()
            if bracket in (b"[", b"{"):
                depth += 1
            elif bracket in (b"]", b"}"):
                depth -= 1
                if depth == 0:
                    return position + token.end()
        if len(data) < window:
            return None
        window *= 4
