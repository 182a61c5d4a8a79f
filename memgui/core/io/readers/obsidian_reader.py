"""Reader of an Obsidian vault: Markdown notes plus `#tags`, `[[wikilinks]]` and embeds.

Each note is read as the Markdown reader reads it, and then:
- inline `#tags` join the trace's tags (`#1984` is not a tag: a tag needs a character that is
  not a digit); headings, URLs' `#fragments`, code blocks, inline code and `%%comments%%`
  give none;
- `[[Target]]`, `[[Target|Alias]]`, `[[Target#Heading]]` and a table's `[[Target\\|Alias]]`
  become `record.links` entries `{"target": label, "type": "related_to", "origin", "line"}`,
  one per target; front-matter properties that hold a wikilink (`up: "[[Books]]"`) link too
  (origin `front_matter`);
- an embed `![[file]]` is not imported: each is listed as its own `unread` record
  (`fields={"embed": target, "note": path}`, source `path:line`), never as a link;
- a note the AgentOS or memgui Obsidian export wrote (its front matter names an `id`) ends in
  what the export appends: the tag line and the **Related:** list. Both are cut from the
  content, so the content is the trace's text again, and read back as tags and links
  (origin `related_list`); a tag line tag `#org-chart` maps back to the front-matter tag
  `org chart` it was written from.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.readers.markdown_reader import Note, front_tags, read_notes, trace_record
from memgui.core.io.readers.text_utils import unread_record
from memgui.core.io.records import NEW, ImportRecord
from memgui.core.progress import Progress

RELATED_TO = "related_to"
_WIKILINK = re.compile(r"\[\[([^\[\]\n]+?)\]\]")
_TAG = re.compile(r"#([^\s#\[\]{}()<>\"'`,.;:!?|\\*=+~^%&@$。、，：；！？「」『』（）【】]+)")
_INLINE_CODE = re.compile(r"`(`*)[^`\n]*?`\1")
_FENCE_MARK = re.compile(r"```+|~~~+")
_COMMENT = re.compile(r"%%.*?(?:%%|\Z)", re.DOTALL)
_RELATED_HEAD = "\n\n**Related:**\n"
_RELATED_ITEM = re.compile(r"- \[\[(.+?)\]\](?:\n|\Z)", re.DOTALL)
_TAG_LINE = re.compile(r"#\S+(?: #\S+)*")
_LINK_MARK = re.compile(r"\[\[|\]\]|\n")


def link_target(inner: str) -> str:
    """The note a wikilink's inside names: no alias, heading, block or `.md` suffix."""
    target = inner.split("|", 1)[0]
    if target.endswith("\\"):  # `[[Target\|Alias]]` escapes the pipe inside a table
        target = target[:-1]
    target = target.split("#", 1)[0].strip()
    return target[:-3] if target.lower().endswith(".md") else target


def is_tag(name: str) -> bool:
    """Obsidian's rule: a tag holds at least one character that is not a digit."""
    return any(not (ch.isdigit() or ch == "/") for ch in name)


@dataclass
class Scan:
    tags: list[str] = field(default_factory=list)
    links: list[tuple[str, int]] = field(default_factory=list)  # (label, line)
    embeds: list[tuple[str, int]] = field(default_factory=list)  # (target, line)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with each span cut down to its line breaks (so lines still count)."""
    if not spans:
        return text
    pieces, pos = [], 0
    for start, end in spans:
        if start < pos:
            continue
        pieces.append(text[pos:start])
        pieces.append(" " + "\n" * text.count("\n", start, end))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


def _fence_spans(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    if "```" in text or "~~~" in text:
        opened: tuple[str, int] | None = None
        for match in _FENCE_MARK.finditer(text):
            start, end = match.span()
            line_start = text.rfind("\n", 0, start) + 1
            if text[line_start:start].strip(" \t>"):
                continue  # not at the start of its line
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            mark, rest = match.group(0), text[end:line_end]
            if mark[0] == "`" and "`" in rest:
                continue  # ```code``` on one line is inline code, not a fence
            if opened is None:
                opened = (mark, line_start)
            elif mark[0] == opened[0][0] and len(mark) >= len(opened[0]) and not rest.strip():
                spans.append((opened[1], line_end))
                opened = None
        if opened is not None:  # an unclosed fence runs to the end, as Obsidian shows it
            spans.append((opened[1], len(text)))
        spans.sort()
    return spans


class _OpenLinks:
    """Whether a place follows a `[[` that its line has not closed with `]]`, asked in order
    (one pass over the text: looking back from each tag took time squared on a long line)."""

    def __init__(self, text: str) -> None:
        self._marks = _LINK_MARK.finditer(text)
        self._next = next(self._marks, None)
        self._open = False

    def at(self, position: int) -> bool:
        mark = self._next
        while mark is not None and mark.start() < position:
            self._open = mark.group() == "[["  # a `]]` or the line's end closes it
            mark = next(self._marks, None)
        self._next = mark
        return self._open


def scan_markdown(text: str, first_line: int) -> Scan:
    """Tags, wikilinks and embeds of a note's text, outside code and comments."""
    found = Scan()
    if "[[" not in text and "#" not in text:
        return found
    text = _blank(text, _fence_spans(text))
    if "`" in text:
        text = _INLINE_CODE.sub(" ", text)
    # Comments are found after the code is gone: a `%%` inside code is text, not a comment.
    if "%%" in text:
        text = _blank(text, [m.span() for m in _COMMENT.finditer(text)])
    counted = [0, first_line]  # offset counted so far and its line: matches come in order

    def line_of(offset: int) -> int:
        counted[1] += text.count("\n", counted[0], offset)
        counted[0] = offset
        return counted[1]

    if "[[" in text:
        for match in _WIKILINK.finditer(text):
            target = link_target(match.group(1))
            if target:
                at = match.start()
                bucket = found.embeds if at and text[at - 1] == "!" else found.links
                bucket.append((target, line_of(match.start())))
    if "#" in text:
        inside_link = _OpenLinks(text)
        for match in _TAG.finditer(text):
            at = match.start()
            if at and not text[at - 1].isspace():
                continue  # `page#part`, `[[#Heading]]`: not a tag
            if inside_link.at(at):
                continue  # inside a wikilink: `[[Note|the #1 pick]]`
            name = match.group(1).rstrip("/-")
            if name and is_tag(name):
                found.tags.append(name)
    return found


def _front_links(note: Note) -> list[tuple[str, int]]:
    """Wikilinks in front-matter properties (`categories: ["[[Books]]"]`)."""
    out: list[tuple[str, int]] = []

    def visit(value: Any, line: int) -> None:
        if isinstance(value, str) and "[[" in value:
            for match in _WIKILINK.finditer(value):
                at = match.start()
                if link_target(match.group(1)) and not (at and value[at - 1] == "!"):
                    out.append((link_target(match.group(1)), line))
        elif isinstance(value, list | tuple):
            for item in value:
                visit(item, line)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, line)

    for key, value in note.front.items():
        visit(value, note.key_lines.get(key, 1))
    return out


def _related_labels(tail: str) -> list[str] | None:
    """The labels of a **Related:** list's items when `tail` is that list whole, else None."""
    pos, found = 0, []
    while pos < len(tail):
        item = _RELATED_ITEM.match(tail, pos)
        if item is None:
            return None
        found.append(link_target(item.group(1)))
        pos = item.end()
    return found or None


def split_export_trailer(body: str, tags: list[str]) -> tuple[str, list[str], list[str]]:
    """Cut the tag line and **Related:** list an Obsidian export appended to a trace's text.

    Returns (content, tag-line tags, related labels). The export writes a tag line only for
    a trace with tags, so a note whose front matter holds none keeps a closing line of
    hashtags as part of its text. The cut is a guess (a text may end in what looks like a
    list); the planner reads a note's body whole against its trace's text (`read_trailer`).
    """
    labels: list[str] = []
    at = body.rfind(_RELATED_HEAD)
    if at >= 0:
        found = _related_labels(body[at + len(_RELATED_HEAD) :])
        if found is not None:
            body, labels = body[:at].rstrip(), [label for label in found if label]
    line_tags: list[str] = []
    if tags:
        at = body.rfind("\n\n")
        last = body[at + 2 :] if at >= 0 else ""
        if at >= 0 and _TAG_LINE.fullmatch(last):
            exported = {re.sub(r"\s+", "-", tag): tag for tag in tags}
            line_tags = [exported.get(tok[1:], tok[1:]) for tok in last.split(" ")]
            body = body[:at].rstrip()
    return body, line_tags, labels


def _after_blank_line(text: str) -> str | None:
    """`text` without the blank line (and other whitespace) it opens with; None without one."""
    rest = text.lstrip()
    return rest if "\n\n" in text[: len(text) - len(rest)] else None


def read_trailer(rest: str) -> tuple[list[str], list[str]] | None:
    """What follows a trace's text in its own note: (tag-line tags, Related labels).

    `rest` is the note's body after the trace's text (the text read whole, a closing line of
    hashtags included). It must be nothing, or what the export writes a blank line apart: a
    tag line, a **Related:** list, or both; else None (the note holds more than its trace).
    Tags are as the line writes them (whitespace as `-`).
    """
    if not rest.strip():
        return [], []
    body = _after_blank_line(rest)
    tags: list[str] = []
    if body is not None and body.startswith("#"):
        end = body.find("\n")
        line = body if end < 0 else body[:end]
        if not _TAG_LINE.fullmatch(line):
            return None
        tags, body = [tok[1:] for tok in line.split(" ")], body[len(line) :]
        if not body:
            return tags, []
        body = _after_blank_line(body)
    head = _RELATED_HEAD.lstrip("\n")
    if body is None or not body.startswith(head):
        return None
    labels = _related_labels(body[len(head) :])
    return None if labels is None else (tags, [label for label in labels if label])


def _note_records(note: Note) -> list[ImportRecord]:
    body = note.body
    stripped = body.lstrip()
    first_line = note.body_line + body.count("\n", 0, len(body) - len(stripped))
    whole = stripped.rstrip()
    content = whole
    line_tags: list[str] = []
    related: list[str] = []
    if note.front.get("id") is not None:
        try:
            tags = front_tags(note.front.get("tags"), keep_hash=True)
        except InvalidArgument:  # bad tags: trace_record refuses the note and says why
            tags = []
        content, line_tags, related = split_export_trailer(content, tags)
    related_line = first_line + stripped.count("\n", 0, stripped.rfind("**Related:**") + 1)
    scan = scan_markdown(content, first_line)
    record = trace_record(note, content, line_tags + scan.tags, line=first_line)
    record.note_tail = whole[len(content) :]
    if record.verdict == NEW:
        seen: set[str] = set()
        origins = (
            [(label, line, "body") for label, line in scan.links]
            + [(label, line, "front_matter") for label, line in _front_links(note)]
            + [(label, related_line, "related_list") for label in related]
        )
        for label, line, origin in origins:
            if label not in seen:
                seen.add(label)
                link = {"target": label, "type": RELATED_TO, "origin": origin, "line": line}
                record.add_link(link)
    records = [record]
    listed: set[str] = set()
    for target, line in scan.embeds:
        if target not in listed:
            listed.add(target)
            records.append(
                unread_record(
                    note.source(line),
                    f"embedded {target!r} is not imported",
                    embed=target,
                    note=note.relative,
                )
            )
    return records


def read_obsidian(path: str | Path, *, options: Any = None) -> Iterator[Progress | ImportRecord]:
    """Read an Obsidian vault: one trace record per note, its embeds and other files unread.

    `options` is accepted for a uniform reader signature; the Obsidian reader has none.
    """
    return read_notes(path, _note_records, "notes")
