"""Helpers the text-format readers share: line endings, hashes, times, unread records.

Nothing here touches a brain. Every function is pure or reads one file at a time, so the
readers built on them stream and can be cancelled between files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.records import SKIPPED, UNREAD, ImportRecord
from memgui.core.model import shown

INT64 = 2**63  # SQLite's integers are 64-bit

PROGRESS_EVERY = 100  # files (or rows) between two Progress events


def option(options: Any, name: str, default: Any = None) -> Any:
    """Read one reader option from a mapping or an options object (None: the default)."""
    if options is None:
        return default
    if isinstance(options, Mapping):
        value = options.get(name, default)
    else:
        value = getattr(options, name, default)
    return default if value is None else value


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR read as LF, so a note saved again by another editor compares equal."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def content_hash(content: str) -> str:
    """The `import_hash` every import stores: SHA-256 of the content's UTF-8 bytes, in hex."""
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def refuse_invalid(record: ImportRecord, error: InvalidArgument) -> ImportRecord:
    """Turn a core validation error into a refused record naming the field and value.

    The reason names the field too (`type must be one of …`): a reason is read on its own.
    """
    return record.refuse(error.field, f"{error.field} {error.problem}", error.value)


def to_epoch_ms(field_name: str, value: object) -> int:
    """Epoch milliseconds from an int, a numeric string, a date or an ISO 8601 text.

    A naive date or time is read as UTC. Anything else, and a time past SQLite's 64-bit
    integers, raises InvalidArgument: a time that cannot be read is refused, never silently
    replaced by "now", and never taken by the plan only to fail the commit.
    """
    ms = _epoch_ms(field_name, value)
    if not -INT64 <= ms < INT64:
        raise InvalidArgument(
            field_name, f"must be epoch milliseconds within ±2**63 (got {shown(value)})", value
        )
    return ms


def _epoch_ms(field_name: str, value: object) -> int:
    if isinstance(value, bool):
        raise _not_a_time(field_name, value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _not_a_time(field_name, value)
        return int(value)
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    if isinstance(value, date):
        return _epoch_ms(field_name, datetime.combine(value, time()))
    if isinstance(value, str):
        text = value.strip()
        try:
            return _epoch_ms(field_name, float(text) if "." in text else int(text))
        except ValueError:
            pass
        try:
            return _epoch_ms(field_name, datetime.fromisoformat(text))
        except ValueError:
            pass
    raise _not_a_time(field_name, value)


def _not_a_time(field_name: str, value: object) -> InvalidArgument:
    problem = f"must be epoch milliseconds or an ISO 8601 date (got {shown(value)})"
    return InvalidArgument(field_name, problem, value)


def json_safe(value: Any) -> Any:
    """A front-matter value as JSON can hold it (dates become ISO text)."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [json_safe(v) for v in value]
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def decode_text(data: bytes) -> str:
    """UTF-8 text without a leading BOM; raises UnicodeDecodeError for other encodings.

    A NUL byte counts as not text: UTF-8 text never holds one, while UTF-16 text and
    binary files are full of them (and UTF-16 without a BOM would decode as UTF-8)."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise UnicodeDecodeError("utf-8", data, nul, nul + 1, "a NUL byte: not text")
    text = data.decode("utf-8")
    return text[1:] if text.startswith("\ufeff") else text


def describe_decode_error(error: UnicodeDecodeError) -> str:
    bad = error.object[error.start : error.start + 1].hex()
    what = " (a NUL byte)" if bad == "00" else ""
    return f"is not UTF-8 text (byte 0x{bad}{what} at offset {error.start})"


def unread_record(source: str, reason: str, **fields: Any) -> ImportRecord:
    """A thing the reader saw and did not read, listed so the person knows."""
    return ImportRecord(source=source, kind=UNREAD, fields=fields, verdict=SKIPPED, reason=reason)


UNEXPECTED = "could not be read: its reader did not expect what it holds"


def unexpected(record: ImportRecord, error: Exception) -> ImportRecord:
    """The record of a unit (a conversation, a note, a row) whose reading raised what no rule
    of its reader foresaw: that unit alone is lost, with what went wrong, and reading goes
    on. The tests keep every reader from coming here (see tests/fuzz)."""
    return record.fail(unexpected_reason(error))


def unexpected_reason(error: Exception) -> str:
    return f"{UNEXPECTED} ({type(error).__name__}: {str(error)[:200]})"
