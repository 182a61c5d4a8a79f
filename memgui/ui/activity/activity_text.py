"""How the Agent activity view words a batch and a change: a line for the tree, and the
before-and-after text of the detail box."""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Mapping
from typing import Any

from memgui.core.brain import Brain
from memgui.core.model import JournalEntry, title_of
from memgui.ui.models.trace_columns import first_line, format_ms

SNIPPET = 70

_VERBS = {
    "add": "added",
    "update": "edited",
    "forget": "forgot",
    "restore": "restored",
    "purge": "purged",
    "expire": "expired",
    "merge": "merged into",
    "revert": "reverted",
    "refile": "refiled",
    "link": "linked",
    "unlink": "unlinked",
}
# Fields a person reads; the rest is bookkeeping (versions, recall counts, vectors).
SHOWN_FIELDS = ("content", "tags", "type", "category", "scope", "scope_id", "expires_at", "deleted")
COMPANION_WORDS = {
    "node": "graph node",
    "edge": "graph edge",
    "document": "document",
    "chunk": "document chunk",
    "image": "document image",
    "conversation": "conversation",
    "message": "message",
    "feedback": "retrieval feedback",
}


def changes_word(count: int) -> str:
    if count > 10_000:
        return "over 10,000 changes"
    return "1 change" if count == 1 else f"{count:,} changes"


def quoted(text: Any) -> str:
    return f"“{first_line(str(text or ''), SNIPPET)}”"


def named(snapshot: Mapping[str, Any]) -> str:
    """A memory as a journal row holds it, named as the app names it: its title, else its
    text."""
    return quoted(title_of(snapshot.get("metadata")) or snapshot.get("content"))


def changed_fields(entry: JournalEntry) -> list[str]:
    before, after = entry.before or {}, entry.after or {}
    return [f for f in SHOWN_FIELDS if before.get(f) != after.get(f)]


def trace_of(entry: JournalEntry) -> str | None:
    """The memory a change is about (a link's first end), or None for other rows."""
    if entry.op in COMPANION_WORDS or entry.op == "review":
        return None
    return entry.trace_id or None


def short_time(ms: int, now: dt.datetime | None = None) -> str:
    """A change's time: the time alone today, with the day before."""
    moment = dt.datetime.fromtimestamp(ms / 1000)
    today = (now or dt.datetime.now()).date()
    return moment.strftime("%H:%M:%S" if moment.date() == today else "%Y-%m-%d %H:%M")


def link_ends(entry: JournalEntry) -> list[str]:
    link = entry.after or entry.before or {}
    return [str(link.get(end) or "") for end in ("from_id", "to_id")]


def describe(entry: JournalEntry, labels: Mapping[str, str] | None = None) -> str:
    """One line: what the change did, to which memory (`labels`: a memory's text by id,
    for the ends of a link)."""
    op = entry.op
    if op in COMPANION_WORDS:
        verb = "added" if entry.before is None else "removed" if entry.after is None else "changed"
        return f"{verb} {COMPANION_WORDS[op]} {entry.trace_id}"
    if op in ("link", "unlink"):
        kind = (entry.after or entry.before or {}).get("kind", "")
        first, second = (
            quoted(labels[end]) if labels and end in labels else end for end in link_ends(entry)
        )
        return f"{_VERBS[op]} {first} —{kind}→ {second}"
    snapshot = entry.after or entry.before or {}
    text = named(snapshot)
    if entry.before is None:
        return f"added {text}" if op == "add" else f"{_VERBS.get(op, op)} (new) {text}"
    if entry.after is None:
        if op == "expire":
            return f"expired {text} (its TTL passed)"
        return f"{_VERBS.get(op, op)} {text} for good"
    if op == "update" or op == "revert":
        fields = changed_fields(entry)
        what = ", ".join(fields) if fields else "nothing a person sees"
        return f"{_VERBS[op]} {what} of {text}"
    return f"{_VERBS.get(op, op)} {text}"


def summarize(ops: dict[str, int], size: int) -> str:
    """A batch in a few words: 'added 3, edited 1' (its first rows), or its size alone."""
    parts = [
        f"{_VERBS.get(op, op).replace(' into', '')} {count}"
        for op, count in ops.items()
        if op not in COMPANION_WORDS and op != "review"
    ]
    extra = sum(count for op, count in ops.items() if op in COMPANION_WORDS)
    if extra:
        parts.append(f"{extra} related rows")
    changes = changes_word(size)
    return f"{changes}: {', '.join(parts)}" if parts else changes


def details_html(entry: JournalEntry, state: str, brain: Brain | None = None) -> str:
    """Who did what, when, and each field a person reads before and after the change."""
    head = (
        f"<p><b>{html.escape(describe(entry))}</b><br>"
        f"by {html.escape(entry.actor)} at {format_ms(entry.at)} · batch "
        f"<code>{html.escape(entry.batch_id)}</code> · memory "
        f"<code>{html.escape(entry.trace_id)}</code>"
        + (f"<br>Now: <i>{html.escape(state)}</i>" if state else "")
        + "</p>"
    )
    before, after = entry.before, entry.after
    if entry.op in ("link", "unlink"):
        link = after or before or {}
        return head + _link_ends(link, brain)
    if before is None and after is None:
        return head
    if before is None or after is None:  # added, or removed for good: the memory as it was
        shown: dict[str, Any] = after or before or {}
        title = "Added" if before is None else "Removed"
        rows = [
            f"<tr><th align=left>{name}</th><td>{_value(shown.get(name))}</td></tr>"
            for name in SHOWN_FIELDS
            if shown.get(name) not in (None, "", [], False)
        ]
        return head + _table(("", title), rows)
    rows = [
        f"<tr><th align=left>{name}</th><td>{_value(before.get(name))}</td>"
        f"<td>{_value(after.get(name))}</td></tr>"
        for name in changed_fields(entry)
    ]
    return head + _table(("", "Before", "After"), rows)


def _table(headers: tuple[str, ...], rows: list[str]) -> str:
    cells = "".join(f"<th align=left>{h}</th>" for h in headers)
    return (
        "<table border=1 cellspacing=0 cellpadding=4 width=100%>"
        f"<tr>{cells}</tr>{''.join(rows)}</table>"
    )


def _value(value: Any) -> str:
    if value is None:
        return "<i>none</i>"
    if isinstance(value, list):
        return html.escape(", ".join(str(v) for v in value)) or "<i>none</i>"
    text = html.escape(str(value))
    return text.replace("\n", "<br>")


def _link_ends(link: dict[str, Any], brain: Brain | None) -> str:
    ends = [link.get("from_id", ""), link.get("to_id", "")]
    found = brain.get_many([e for e in ends if e]) if brain is not None else {}
    items = [
        f"<li><code>{html.escape(e)}</code> "
        + (html.escape(quoted(found[e].label)) if e in found else "<i>not in the brain</i>")
        + "</li>"
        for e in ends
    ]
    return f"<p>{html.escape(str(link.get('kind', '')))} between:</p><ul>{''.join(items)}</ul>"


def batch_text(actor: str, at: int, summary: str) -> str:
    return f"{actor} at {format_ms(at)}: {summary}"
