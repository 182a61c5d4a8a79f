"""What a journal row changed, in words: the History tab's summary of each row and the
detail of the chosen one (a diff of the content and the tags, the other memory of a link
by its name, the memories a merge took in), so that restoring a version is never blind.
"""

from __future__ import annotations

import difflib
import html
from collections.abc import Mapping
from typing import Any

from memgui.core.model import JournalEntry
from memgui.ui.models.memory_names import GONE, name_of, name_of_state
from memgui.ui.theme import colours

LINK_OPS = ("link", "unlink")
SYMMETRIC = ("relates_to",)
SHOWN_FIELDS = ("type", "scope", "scope_id", "category", "expires_at", "deleted")
LABELS = {"scope_id": "scope id", "expires_at": "expiry"}


def _tags(state: Mapping[str, Any] | None) -> list[str]:
    tags = (state or {}).get("tags") or []
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def tag_change(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """'+urgent −draft' (tags added and removed), '' when they did not change."""
    old, new = _tags(before), _tags(after)
    added = [f"+{t}" for t in new if t not in old]
    removed = [f"−{t}" for t in old if t not in new]
    return " ".join(added + removed)


def other_end(entry: JournalEntry, shown: str = "") -> tuple[str, str, str]:
    """(kind, the other memory's id, arrow) of a link row, read from the memory `shown`
    (by default the row's own first trace)."""
    link = entry.after or entry.before or {}
    kind = str(link.get("kind", ""))
    from_id, to_id = link.get("from_id"), link.get("to_id")
    this = shown or entry.trace_id
    other = to_id if from_id == this else from_id
    if kind in SYMMETRIC:
        arrow = "↔"
    else:
        arrow = "→" if from_id == this else "←"
    return kind, str(other or ""), arrow


def describe_change(
    entry: JournalEntry,
    names: Mapping[str, str],
    absorbed: Mapping[str, list[str]],
    shown: str = "",
) -> str:
    """One line: what the row did to the memory `shown`, others named by `names`."""
    if entry.op in LINK_OPS:
        kind, other, arrow = other_end(entry, shown)
        verb = "linked" if entry.op == "link" else "unlinked"
        return f"{verb} {arrow} “{names.get(other, 'another memory')}” ({kind})"
    before, after = entry.before, entry.after
    if before is None:
        return "created" if entry.op == "add" else f"{entry.op}: created"
    if after is None:
        return f"{entry.op}: removed for good"
    parts = []
    if before.get("content") != after.get("content"):
        parts.append("content")
    tags = tag_change(before, after)
    if tags:
        parts.append(f"tags {tags}")
    parts += [
        LABELS.get(name, name) for name in SHOWN_FIELDS if before.get(name) != after.get(name)
    ]
    if entry.op == "forget" and parts == ["deleted"]:
        return "moved to the trash"
    if entry.op == "restore" and parts == ["deleted"]:
        return "restored from the trash"
    text = f"{entry.op}: {', '.join(parts)}" if parts else entry.op
    taken = absorbed.get(entry.batch_id) if entry.op == "merge" else None
    if taken:
        text += f"; took in {', '.join(f'“{n}”' for n in taken)}"
    return text


def _content_diff(old: str, new: str) -> str:
    lines = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2):
        if line.startswith(("---", "+++", "@@")):
            continue
        # The conflict view's colours: the old text's lines, the new text's lines.
        colour = colours.MINE if line.startswith("+") else None
        colour = colours.THEIRS if line.startswith("-") else colour
        text = html.escape(line)
        style = f"background-color:{colour}; color:{colours.BLACK};"
        lines.append(f'<span style="{style}">{text}</span>' if colour else text)
    return "<pre>" + "\n".join(lines) + "</pre>"


def change_details(
    entry: JournalEntry,
    names: Mapping[str, str],
    absorbed: Mapping[str, list[str]],
    shown: str = "",
) -> str:
    """The chosen row in full (HTML): the content's changed lines, the tags, the fields."""
    head = html.escape(describe_change(entry, names, absorbed, shown))
    before, after = entry.before, entry.after
    if entry.op in LINK_OPS or before is None or after is None:
        state = after or before or {}
        if entry.op not in LINK_OPS and state.get("content"):
            return f"<p><b>{head}</b></p><pre>{html.escape(str(state['content']))}</pre>"
        return f"<p><b>{head}</b></p>"
    out = [f"<p><b>{head}</b></p>"]
    old, new = str(before.get("content") or ""), str(after.get("content") or "")
    if old != new:
        out.append("<p>Content (− before, + after):</p>" + _content_diff(old, new))
    tags = tag_change(before, after)
    if tags:
        out.append(f"<p>Tags: {html.escape(tags)}</p>")
    for name in SHOWN_FIELDS:
        if before.get(name) != after.get(name):
            label = LABELS.get(name, name).capitalize()
            out.append(
                f"<p>{label}: {html.escape(str(before.get(name)))} → "
                f"{html.escape(str(after.get(name)))}</p>"
            )
    taken = absorbed.get(entry.batch_id) if entry.op == "merge" else None
    if taken:
        out.append("<p>Took in: " + ", ".join(f"“{html.escape(n)}”" for n in taken) + "</p>")
    return "".join(out)


def names_for(entries: list[JournalEntry], lookup: Any, shown: str = "") -> dict[str, str]:
    """The names of the other memories the link rows of `entries` mention, read with
    `lookup(ids) -> {id: Trace}` (a memory gone since is named as gone)."""
    others = sorted({other_end(e, shown)[1] for e in entries if e.op in LINK_OPS} - {""})
    found = lookup(others) if others else {}
    return {i: name_of(found[i]) if i in found else GONE for i in others}


def absorbed_by_merges(entries: list[JournalEntry], batch_rows: Any) -> dict[str, list[str]]:
    """For each merge row of `entries`, the names of the memories its batch put in the trash
    (`batch_rows(batch_id) -> [JournalEntry]`)."""
    taken: dict[str, list[str]] = {}
    for entry in entries:
        if entry.op != "merge" or entry.batch_id in taken:
            continue
        rows = batch_rows(entry.batch_id)
        taken[entry.batch_id] = [
            name_of_state(row.before)
            for row in rows
            if row.op == "forget" and row.trace_id != entry.trace_id
        ]
    return taken
