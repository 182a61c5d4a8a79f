"""Reader of a CSV file with a header row: one trace record per row.

Rules of the AgentOS CSV import, kept: a BOM is dropped; the header is matched without case
and surrounding spaces; a `content` column is required; the optional columns are `id`,
`type`, `scope`, `strength`, `created_at` / `createdAt`, `last_accessed`, `retrieval_count`,
`deleted`, `tags`, `metadata`, `scope_id`, and here `category` too. Tags are a JSON array,
else `|`-separated when a `|` is there, else `,`-separated. A `metadata` cell must be a JSON
object, or the row is an error. A row's scope id is its metadata's `scopeId`, else its
`scope_id` cell, which is then written into the metadata. Quoted multi-line cells and CRLF
rows parse; the content is trimmed, CRLF read as LF, and a row whose content is blank is
skipped (counted, as seed 000 says), after its `metadata` cell is read.

Better than AgentOS: an ISO 8601 date is read (not replaced by "now"); a time, number or flag
that cannot be read refuses the row and names the cell; the file is read row by row.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.csv_fields import CsvTraceFields
from memgui.core.io.readers.json_bounds import load_value
from memgui.core.io.readers.text_utils import (
    PROGRESS_EVERY,
    content_hash,
    normalize_newlines,
    option,
    refuse_invalid,
    to_epoch_ms,
    unexpected,
)
from memgui.core.io.records import NO_LINKS, SKIPPED, TRACE, UNREAD, ImportRecord
from memgui.core.model import (
    SCOPES,
    TYPES,
    check_category,
    check_choice,
    check_strength,
    check_tags,
)
from memgui.core.progress import Progress

# Header name (lower case) -> the column's meaning.
COLUMNS = {
    "content": "content",
    "id": "id",
    "type": "type",
    "scope": "scope",
    "strength": "strength",
    "created_at": "created_at",
    "createdat": "created_at",
    "last_accessed": "last_accessed",
    "retrieval_count": "retrieval_count",
    "deleted": "deleted",
    "tags": "tags",
    "metadata": "metadata",
    "scope_id": "scope_id",
    "category": "category",
}
MAX_CELL_CHARS = 64 * 1024 * 1024  # a long document in one cell is still one trace
_TRUE, _FALSE = ("1", "true", "yes"), ("", "0", "false", "no")


class BlankContent(InvalidArgument):
    """A row with no text: skipped, not refused."""


def parse_tags(cell: str) -> list[str]:
    """A tags cell: a JSON array, else `a|b|c`, else `a,b`."""
    text = cell.strip()
    if not text:
        return []
    if text.startswith("["):
        return list(check_tags(load_value("tags", text)))
    parts = text.split("|") if "|" in text else text.split(",")
    return list(check_tags([part.strip() for part in parts if part.strip()]))


def parse_metadata(cell: str) -> dict[str, Any]:
    if not cell.strip():
        return {}
    value = load_value("metadata", cell)
    if not isinstance(value, dict):
        kind = "null" if value is None else type(value).__name__
        raise InvalidArgument("metadata", f"must be a JSON object (got {kind})", cell)
    return value


def _number(name: str, cell: str, kind: type) -> Any:
    try:
        return kind(cell.strip())
    except ValueError:
        raise InvalidArgument(name, f"must be a {kind.__name__} (got {cell!r})", cell) from None


def row_fields(cells: dict[str, str]) -> dict[str, Any]:
    """The trace fields of one row (column meaning -> cell); raises InvalidArgument."""
    metadata = parse_metadata(cells.get("metadata", ""))  # first: a bad one is an error
    content = normalize_newlines(cells.get("content", "")).strip()
    if not content:
        raise BlankContent("content", "is blank: the row holds no text to import", content)
    fields: dict[str, Any] = {"content": content}
    if cells.get("id", "").strip():
        fields["id"] = cells["id"].strip()
    fields["type"] = check_choice("type", cells.get("type", "").strip() or "episodic", TYPES)
    fields["scope"] = check_choice("scope", cells.get("scope", "").strip() or "user", SCOPES)
    fields["category"] = check_category(cells.get("category", "").strip() or None)
    fields["tags"] = parse_tags(cells.get("tags", ""))
    strength = cells.get("strength", "").strip()
    fields["strength"] = check_strength(_number("strength", strength, float) if strength else 1.0)
    for name in ("created_at", "last_accessed"):
        if cells.get(name, "").strip():
            fields[name] = to_epoch_ms(name, cells[name])
    if cells.get("retrieval_count", "").strip():
        count = _number("retrieval_count", cells["retrieval_count"], int)
        if count < 0:
            raise InvalidArgument("retrieval_count", f"must be 0 or more (got {count})", count)
        fields["retrieval_count"] = count
    flag = cells.get("deleted", "").strip().lower()
    if flag not in _TRUE + _FALSE:
        raise InvalidArgument("deleted", f"must be 0 or 1 (got {cells['deleted']!r})", flag)
    fields["deleted"] = flag in _TRUE
    scope_id = metadata.get("scopeId")
    if not isinstance(scope_id, str):
        scope_id = cells.get("scope_id", "").strip()
        if scope_id:
            metadata["scopeId"] = scope_id
    fields["scope_id"] = scope_id
    metadata["import_hash"] = content_hash(content)
    fields["metadata"] = metadata
    return fields


def _file_problem(source: str, field: str | None, reason: str, value: Any = None) -> ImportRecord:
    record = ImportRecord(source=source, kind=UNREAD).fail(reason)
    record.problem_field, record.value = field, value
    return record


def read_csv(path: str | Path, *, options: Any = None) -> Iterator[Progress | ImportRecord]:
    """Read a CSV file row by row.

    Option `content_column`: the header of the column that holds the content, for a file
    that names it otherwise (`text`); it is matched without case like every header.
    """
    file_path = Path(path)
    name = file_path.name
    content_column = str(option(options, "content_column", "content")).strip().lower()
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL_CHARS))
    yield Progress(0, None, f"reading {name}")
    rows = 0
    with open(file_path, encoding="utf-8-sig", newline="") as file:
        reader = csv.reader(file)
        line = 0
        try:
            header = next(reader, None)
            while header is not None and not any(cell.strip() for cell in header):
                header = next(reader, None)  # blank lines before the header
            if header is None:
                yield _file_problem(f"{name}:1", None, "the file is empty: no header row")
                return
            names = [cell.strip().lower() for cell in header]
            if content_column not in names:
                listed = ", ".join(cell.strip() for cell in header)
                reason = f'has no "{content_column}" column (the header is: {listed})'
                yield _file_problem(f"{name}:{reader.line_num}", "content", reason, listed)
                return
            # with content_column set, a column named "content" is left out, not read twice
            meanings = [
                "content" if n == content_column else "" if n == "content" else COLUMNS.get(n, "")
                for n in names
            ]
            line = reader.line_num
            for row in reader:
                first_line, line = line + 1, reader.line_num
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue  # a blank line is no row
                rows += 1
                yield _row_record(f"{name}:{first_line}", row, meanings)
                if rows % PROGRESS_EVERY == 0:
                    yield Progress(rows, None, f"read {rows} rows of {name}")
        except UnicodeDecodeError as error:
            yield _file_problem(
                f"{name}:{line + 1}",
                None,
                f"the rest of the file is not UTF-8 "
                f"text ({error.reason}); rows after line {line} were not read",
            )
        except csv.Error as error:
            yield _file_problem(
                f"{name}:{line + 1}", None, f"the rest of the file is not valid CSV: {error}"
            )
    yield Progress(rows, rows, f"read {rows} rows of {name}")


def _row_record(source: str, row: list[str], meanings: list[str]) -> ImportRecord:
    try:
        return _read_row(source, row, meanings)
    except Exception as exc:  # a row no rule foresaw is lost alone, never the import
        return unexpected(ImportRecord(source=source, kind=TRACE), exc)


def _read_row(source: str, row: list[str], meanings: list[str]) -> ImportRecord:
    record = ImportRecord(source=source, kind=TRACE, links=NO_LINKS)  # a CSV row links none
    if len(row) > len(meanings) and any(cell.strip() for cell in row[len(meanings) :]):
        return _row_error(record, None, f"has {len(row)} cells, the header {len(meanings)}", row)
    if "\x00" in "".join(row):  # UTF-8 text holds none: a binary or UTF-16 file
        column = next(i for i, cell in enumerate(row) if "\x00" in cell)
        reason = f"cell {column + 1} holds a NUL byte: the row is not text"
        return _row_error(record, None, reason, row[column])
    cells = {meaning: cell for meaning, cell in zip(meanings, row, strict=False) if meaning}
    try:
        record.fields = CsvTraceFields(row_fields(cells))  # held compactly: see csv_fields
    except InvalidArgument as error:
        record.fields = {"content": cells.get("content", "")}
        if isinstance(error, BlankContent):
            record.verdict, record.problem_field, record.value = SKIPPED, error.field, error.value
            record.reason = f"{error.field} {error.problem}"
            return record
        if error.field == "metadata":  # the AgentOS rule: a bad metadata cell is an error
            return _row_error(record, error.field, f"metadata {error.problem}", error.value)
        return refuse_invalid(record, error)
    return record


def _row_error(record: ImportRecord, field: str | None, reason: str, value: Any) -> ImportRecord:
    record.fail(reason)
    record.problem_field, record.value = field, value
    return record
