"""Reader of a folder of Markdown notes with YAML front matter (one trace per note).

Front matter is data, never code: it is read with the safe YAML loader within bounds
(`front_matter_yaml`: an alias bomb, an alias inside its own anchor or deep nesting refuses
the note, naming why), and a block marked with another language (`---js`) gives no fields
and is never evaluated. Fields and defaults follow the AgentOS Markdown import: `id`, `type`
(episodic), `scope` (user), `scopeId` (''), `turnUserId`, `tags` ([]), `strength` (1.0),
`createdAt` (now, set by the brain), plus `category`; Obsidian's and Dendron's `created` (a
date, or epoch ms) dates a note that has no `createdAt`. The body without its surrounding
whitespace, with CRLF and CR read as LF, is the content. Any other front-matter key is kept in
the trace's metadata under `front_matter`. A note exported by AgentOS or memgui keeps its trace
id, so the planner can tell it is that trace's own note.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.front_matter_yaml import FrontMatterRefused, load_front_matter
from memgui.core.io.readers.text_utils import (
    PROGRESS_EVERY,
    content_hash,
    decode_text,
    describe_decode_error,
    json_safe,
    normalize_newlines,
    refuse_invalid,
    to_epoch_ms,
    unexpected,
    unread_record,
)
from memgui.core.io.records import SKIPPED, TRACE, ImportRecord
from memgui.core.io.source_files import (
    MAX_NOTE_BYTES,
    FileRefused,
    WalkEntry,
    count_wanted,
    named_file,
    read_bounded,
    walk_folder,
)
from memgui.core.model import (
    SCOPES,
    TYPES,
    check_category,
    check_choice,
    check_strength,
    check_tags,
)
from memgui.core.progress import Progress

MARKDOWN_SUFFIXES = (".md", ".markdown")
DEFAULT_TYPE, DEFAULT_SCOPE, DEFAULT_STRENGTH = "episodic", "user", 1.0
# Keys the AgentOS and memgui exports write; every other key is kept as metadata.
KNOWN_KEYS = frozenset(
    {"id", "type", "scope", "scopeId", "scopeIdForm", "turnUserId", "tags", "strength"}
    | {"createdAt", "created_at", "category"}
)

_OPENING = re.compile(r"---[ \t]*(?:([A-Za-z][\w-]*)[ \t]*)?")
_CLOSING = re.compile(r"^---[ \t]*$", re.MULTILINE)
_TOP_KEY = re.compile(r"^([^\s#:][^:\n]*?)[ \t]*:", re.MULTILINE)  # within its line


def is_markdown(name: str) -> bool:
    return name.lower().endswith(MARKDOWN_SUFFIXES)


class FrontMatterError(Exception):
    def __init__(self, reason: str, line: int, value: object = None) -> None:
        super().__init__(reason)
        self.reason, self.line, self.value = reason, line, value


@dataclass
class Note:
    relative: str  # POSIX path below the folder read
    front: dict[str, Any]
    body: str  # after the front matter, LF line endings, not trimmed
    body_line: int  # 1-based line of the file where the body starts
    key_lines: dict[str, int] = field(default_factory=dict)  # front-matter key -> line
    ignored_language: str | None = None  # `---js`: a block that was not read

    def source(self, line: int | None = None) -> str:
        return f"{self.relative}:{line or self.body_line}"

    def key_source(self, key: str) -> str:
        return self.source(self.key_lines.get(key, 1))


def parse_note(text: str, relative: str) -> Note:
    """Split and read the front matter of one note's text (LF line endings, no BOM)."""
    opening = _OPENING.match(text)
    first_end = text.find("\n")
    if opening is None or opening.end() != (first_end if first_end >= 0 else len(text)):
        return Note(relative, {}, text, 1)
    closing = _CLOSING.search(text, first_end + 1) if first_end >= 0 else None
    if closing is None:
        raise FrontMatterError("front matter opened on line 1 is never closed with ---", 1)
    front_text = text[first_end + 1 : closing.start()]
    body_start = min(closing.end() + 1, len(text))
    body_line = text.count("\n", 0, body_start) + 1
    language = (opening.group(1) or "yaml").lower()
    if language not in ("yaml", "yml"):
        return Note(relative, {}, text[body_start:], body_line, ignored_language=language)
    try:
        front = load_front_matter(front_text)
    except FrontMatterRefused as refused:
        raise FrontMatterError(refused.reason, refused.line + 1 if refused.line else 1) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 2 if mark is not None else 1
        lines = front_text.split("\n")
        value = lines[line - 2] if 0 <= line - 2 < len(lines) else None
        problem = error.problem or error.context or "is not valid"
        raise FrontMatterError(f"front matter is not valid YAML: {problem}", line, value) from None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        # e.g. a date the calendar does not hold: `created: 2023-02-30`
        raise FrontMatterError(f"front matter could not be read: {error}", 1) from None
    if front is None:
        front = {}
    if not isinstance(front, dict):
        kind = type(front).__name__
        raise FrontMatterError(f"front matter must be a mapping of keys (got a {kind})", 1)
    front = {str(k): v for k, v in front.items()}
    return Note(relative, front, text[body_start:], body_line, _key_lines(front_text))


def _key_lines(front_text: str) -> dict[str, int]:
    """The file line of each top-level key (counted as the keys come: once over the text)."""
    lines: dict[str, int] = {}
    line, counted = 2, 0  # the block starts on the file's second line
    for match in _TOP_KEY.finditer(front_text):
        line += front_text.count("\n", counted, match.start())
        counted = match.start()
        lines[match.group(1)] = line
    return lines


def front_tags(value: object, keep_hash: bool = False) -> list[str]:
    """Front-matter `tags` as a list: a YAML list, or one text `a, b` as Obsidian allows.

    A leading `#` is dropped (`tags: ["#book"]` is Obsidian's tag `book`), except with
    `keep_hash`: a note an export wrote holds its trace's tags verbatim (a tag `#hash`).
    """
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise InvalidArgument("tags", f"must be a list of strings (got {value!r})", value)
    out: list[Any] = []
    for item in items:
        if isinstance(item, str):
            item = item.strip()
            item = item if keep_hash else item.removeprefix("#")
            if not item:
                continue
        out.append(item)
    return list(check_tags(out))


class _FieldReader:
    """Reads trace fields from front matter, strictly for a note an export wrote.

    A note whose front matter names an `id` was written by an AgentOS or memgui export, so a
    bad `type` is a real problem and refuses the note. Any other note (an Obsidian vault's
    `type: "[[Authors]]"`) owns its properties: a value that is not a valid trace field is
    kept in the metadata's `front_matter` and the field takes its default.
    """

    def __init__(self, front: dict[str, Any]) -> None:
        self.front = front
        self.strict = "id" in front
        self.kept: dict[str, Any] = {}
        self.key = ""  # the key being read, for the source line of a refusal

    def read(self, key: str, check: Callable[[Any], Any], default: Any, ours: bool = True) -> Any:
        """One field; `ours=False` for a key other tools own (`created`), never refused."""
        self.key = key
        value = self.front.get(key)
        if value is None:
            return default
        try:
            return check(value)
        except InvalidArgument:
            if self.strict and ours:
                raise
            if key not in KNOWN_KEYS:
                return default  # stays in `front_matter` with the other properties
            self.kept[key] = json_safe(value)
            return default


def _check_id(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidArgument("id", f"must be a text (got {value!r})", value)
    return str(value) or None


def _read_fields(reader: _FieldReader, metadata: dict[str, Any]) -> dict[str, Any]:
    front = reader.front
    fields: dict[str, Any] = {}
    trace_id = reader.read("id", _check_id, None)
    if trace_id is not None:
        fields["id"] = trace_id
    fields["type"] = reader.read("type", lambda v: check_choice("type", v, TYPES), DEFAULT_TYPE)
    fields["scope"] = reader.read(
        "scope", lambda v: check_choice("scope", v, SCOPES), DEFAULT_SCOPE
    )
    scope_id = front.get("scopeId")  # any value but a text is ignored, as AgentOS does
    fields["scope_id"] = scope_id if isinstance(scope_id, str) else ""
    if isinstance(scope_id, str):
        metadata["scopeId"] = scope_id
    if front.get("scopeIdForm") == "encoded":
        metadata["scopeIdForm"] = "encoded"
    turn_user = front.get("turnUserId")
    if isinstance(turn_user, str) and turn_user:
        metadata["turnUserId"] = turn_user
    fields["category"] = reader.read("category", check_category, None)
    fields["tags"] = reader.read("tags", lambda v: front_tags(v, reader.strict), [])
    fields["strength"] = reader.read("strength", check_strength, DEFAULT_STRENGTH)
    for key in ("createdAt", "created_at", "created"):
        created = reader.read(key, partial(to_epoch_ms, key), None, key != "created")
        if created is not None:
            fields["created_at"] = created
            break
    return fields


def trace_record(
    note: Note, content: str, extra_tags: Iterable[str] = (), line: int | None = None
) -> ImportRecord:
    """The trace record of a note whose content the caller has cut out of its body."""
    metadata: dict[str, Any] = {"source_file": note.relative}
    record = ImportRecord(source=note.source(line), kind=TRACE, fields={"metadata": metadata})
    if note.ignored_language:
        record.reason = f"front matter marked as {note.ignored_language} was not read"
    if not content.strip():  # seed 000: a blank note is skipped (counted), not refused
        record.fields["content"] = content
        record.verdict, record.problem_field, record.value = SKIPPED, "content", content
        record.reason = "content is blank: the note holds no text to import"
        return record
    reader = _FieldReader(note.front)
    try:
        fields = _read_fields(reader, metadata)
        reader.key = "tags"
        fields["tags"] = list(check_tags(fields["tags"] + list(extra_tags)))
    except InvalidArgument as error:
        record.source = note.key_source(reader.key)
        record.fields["content"] = content
        return refuse_invalid(record, error)
    fields["content"] = content
    metadata["import_hash"] = content_hash(content)
    extras = {k: json_safe(v) for k, v in note.front.items() if k not in KNOWN_KEYS}
    extras.update(reader.kept)
    if extras:
        metadata["front_matter"] = extras
    fields["metadata"] = metadata
    record.fields = fields
    return record


def load_note(entry: WalkEntry) -> Note | ImportRecord:
    """Read one file: its Note, or an error/refused record saying why it could not be read."""
    source = f"{entry.relative}:1"
    try:
        data = read_bounded(entry.path, MAX_NOTE_BYTES, entry.identity)
    except FileRefused as refused:
        return ImportRecord(source, TRACE).refuse("content", refused.reason, refused.size)
    except OSError as error:
        return ImportRecord(source, TRACE).fail(f"could not be read: {error.strerror}")
    try:
        text = normalize_newlines(decode_text(data))
    except UnicodeDecodeError as error:
        return ImportRecord(source, TRACE).fail(f"the note {describe_decode_error(error)}")
    try:
        return parse_note(text, entry.relative)
    except FrontMatterError as error:
        record = ImportRecord(f"{entry.relative}:{error.line}", TRACE)
        record.fields = {"metadata": {"source_file": entry.relative}}
        return record.refuse("front_matter", error.reason, error.value)


def read_notes(
    path: str | Path, to_records: Callable[[Note], Iterable[ImportRecord]], what: str
) -> Iterator[Progress | ImportRecord]:
    """Walk a folder (or read one note) and turn each note into records, one file at a time."""
    root = Path(path)
    if root.is_file():
        entries: Iterable[WalkEntry] = [named_file(root, is_markdown)]
        total = 1
    elif root.is_dir():
        total = count_wanted(root, is_markdown)
        entries = walk_folder(root, is_markdown)
    else:
        raise InvalidArgument("path", f"is not a folder or a file (got '{root}')", str(root))
    yield Progress(0, total, f"reading {total} {what}")
    done = 0
    for entry in entries:
        if not entry.wanted:
            yield unread_record(entry.relative, entry.why_unread, file=entry.relative)
            continue
        try:
            loaded = load_note(entry)
            notes = [loaded] if isinstance(loaded, ImportRecord) else list(to_records(loaded))
        except Exception as exc:  # a note no rule foresaw is lost alone, never the import
            notes = [unexpected(ImportRecord(f"{entry.relative}:1", TRACE), exc)]
        yield from notes
        done += 1
        if done % PROGRESS_EVERY == 0:
            yield Progress(done, total, f"read {done} of {total} {what}")
    yield Progress(done, total, f"read {done} {what}")


def _markdown_records(note: Note) -> list[ImportRecord]:
    body = note.body
    stripped = body.lstrip()
    line = note.body_line + body.count("\n", 0, len(body) - len(stripped))
    return [trace_record(note, stripped.rstrip(), line=line)]


def read_markdown(path: str | Path, *, options: Any = None) -> Iterator[Progress | ImportRecord]:
    """Read a folder of Markdown notes: one trace record per `.md` file, others listed unread.

    `options` is accepted for a uniform reader signature; the Markdown reader has none.
    """
    return read_notes(path, _markdown_records, "notes")
