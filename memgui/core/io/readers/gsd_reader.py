"""Reader of a GSD project's `.planning/STATE.md`, as agent-memory's `gsd-state` import reads it.

A tolerant single-pass line scanner (agent-memory `src/import/gsd_state.rs`):
- each line is trimmed; a line starting with ``` toggles a fence, and nothing inside one
  counts (not even a heading); `~~~` is not a fence;
- a heading of any level switches the section, by its exact text: `Decisions` (category
  DECISION), `Blockers/Concerns` (CONSTRAINT), `Pending Todos` (TODO), `Deferred Items` (a
  table: TODO tagged `deferred`); any other heading's lines are ignored;
- in a bullet section, `- text` is one memory, content exactly as written (`[01-02]:`
  prefixes kept); prose, `*`/`+` bullets and `None yet.` are ignored; an empty bullet and a
  body over 8,192 UTF-8 bytes are refused (agent-memory counts them as malformed);
- in the table, the first row is the header, separator rows are skipped, and a row of at
  least three cells becomes `"{cell 2} — {cell 3}"` (an em dash); a shorter row is refused.

Each record is tagged `gsd` (then `deferred`), carries `metadata.source = "gsd-state"`, and is
filed under scope `user` with the project's name as scope id: the folder holding `.planning`,
else the file's folder (options `scope` and `scope_id` override both). Decisions and
constraints are `semantic` traces, todos `prospective` ones. Stability follows agent-memory's
half-lives (180 days for the pinned DECISION and CONSTRAINT, 30 days for TODO), as DESIGN §4
says for memories that come from agent-memory.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.text_utils import (
    content_hash,
    decode_text,
    describe_decode_error,
    normalize_newlines,
    option,
    unexpected,
)
from memgui.core.io.records import TRACE, UNREAD, ImportRecord
from memgui.core.io.source_files import MAX_NOTE_BYTES, FileRefused, read_bounded
from memgui.core.model import DAY_MS, PINNED_CATEGORIES, SCOPES, check_choice
from memgui.core.progress import Progress

MAX_CONTENT_BYTES = 8192
SOURCE = "gsd-state"
SECTIONS = {
    "Decisions": "DECISION",
    "Blockers/Concerns": "CONSTRAINT",
    "Pending Todos": "TODO",
    "Deferred Items": "TODO",
}
TABLE_SECTION = "Deferred Items"
TYPE_OF_CATEGORY = {"DECISION": "semantic", "CONSTRAINT": "semantic", "TODO": "prospective"}
EM_DASH_JOIN = " \u2014 "


def half_life_stability_ms(category: str) -> int:
    """agent-memory's decay half-life as an AgentOS stability (H / ln 2)."""
    half_life_days = 180 if category in PINNED_CATEGORIES else 30
    return round(half_life_days * DAY_MS / math.log(2))


def project_name(path: Path) -> str:
    """The folder holding `.planning` (agent-memory's default scope), else the file's folder."""
    resolved = path.resolve()
    for folder in resolved.parents:
        if folder.name == ".planning":
            return folder.parent.name
    return resolved.parent.name


class _Drafts:
    """Turns scanned items into records that share the file's scope and source."""

    def __init__(self, name: str, relative: str, scope: str, scope_id: str) -> None:
        self.name, self.relative = name, relative
        self.scope, self.scope_id = scope, scope_id

    def record(self, line: int, content: str, category: str, deferred: bool) -> ImportRecord:
        record = ImportRecord(source=f"{self.name}:{line}", kind=TRACE)
        size = len(content.encode("utf-8", "surrogatepass"))
        if not content:
            return record.refuse("content", "content is empty: the bullet holds no text", content)
        if size > MAX_CONTENT_BYTES:
            record.fields = {"content": content}
            reason = f"content must be at most {MAX_CONTENT_BYTES} bytes in UTF-8 (got {size})"
            return record.refuse("content", reason, size)
        record.fields = {
            "content": content,
            "type": TYPE_OF_CATEGORY[category],
            "scope": self.scope,
            "scope_id": self.scope_id,
            "category": category,
            "tags": ["gsd", "deferred"] if deferred else ["gsd"],
            "strength": 1.0,
            "stability_ms": half_life_stability_ms(category),
            "metadata": {
                "source": SOURCE,
                "source_file": self.relative,
                "scopeId": self.scope_id,
                "import_hash": content_hash(content),
            },
        }
        return record


def _table_cells(line: str) -> list[str] | None:
    """A table row's trimmed cells; None for a separator row."""
    if set(line) <= set("|-: "):
        return None
    inner = line[1:-1] if line.endswith("|") and len(line) > 1 else line[1:]
    return [cell.strip() for cell in inner.split("|")]


def scan_state(text: str, drafts: _Drafts) -> Iterator[ImportRecord]:
    """Records of one STATE.md text (LF line endings), in file order."""
    in_fence = False
    section: str | None = None
    header_seen = False
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if line.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            section = heading if heading in SECTIONS else None
            header_seen = False
            continue
        if section is None:
            continue
        category = SECTIONS[section]
        if section == TABLE_SECTION:
            if not line.startswith("|"):
                continue
            cells = _table_cells(line)
            if cells is None:
                continue
            if not header_seen:
                header_seen = True
                continue
            if len(cells) < 3:
                record = ImportRecord(source=f"{drafts.name}:{number}", kind=TRACE)
                reason = f"content: a deferred item needs 3 cells (got {len(cells)})"
                yield record.refuse("content", reason, line)
                continue
            content = f"{cells[1]}{EM_DASH_JOIN}{cells[2]}"
            yield drafts.record(number, content, category, deferred=True)
        elif line == "-":
            yield drafts.record(number, "", category, deferred=False)
        elif line.startswith("- "):
            body = line[2:].strip()
            if body != "None yet.":
                yield drafts.record(number, body, category, deferred=False)


def read_gsd(path: str | Path, *, options: Any = None) -> Iterator[Progress | ImportRecord]:
    """Read a GSD `STATE.md`. Options: `scope` (default user), `scope_id` (the project name)."""
    file_path = Path(path)
    name = file_path.name
    scope = option(options, "scope", "user")
    check_choice("scope", scope, SCOPES)
    if not file_path.is_file():
        raise InvalidArgument("path", f"is not a file (got '{file_path}')", str(file_path))
    scope_id = str(option(options, "scope_id", project_name(file_path)))
    yield Progress(0, 1, f"reading {name}")
    try:
        data = read_bounded(os.path.realpath(file_path), MAX_NOTE_BYTES)
        text = normalize_newlines(decode_text(data))
    except FileRefused as refused:
        yield ImportRecord(f"{name}:1", UNREAD).fail(refused.reason)
        return
    except OSError as error:
        yield ImportRecord(f"{name}:1", UNREAD).fail(f"could not be read: {error.strerror}")
        return
    except UnicodeDecodeError as error:
        yield ImportRecord(f"{name}:1", UNREAD).fail(f"the file {describe_decode_error(error)}")
        return
    try:
        found = list(scan_state(text, _Drafts(name, name, scope, scope_id)))
    except Exception as exc:  # a shape no rule foresaw: said, never a crash of the import
        found = [unexpected(ImportRecord(f"{name}:1", UNREAD), exc)]
    yield from found
    yield Progress(1, 1, f"read {name}")
