"""A trace's journal rows as changed fields, and the whole states read back from them.

Since schema 5 a row that changes a trace in place (update, forget, restore, merge, a
revert's update) keeps only the fields it changed: `before` holds their previous values,
`after` their new ones, and neither names the trace's `id` (a whole snapshot always does,
so the shapes never mix up). A forget's row is its three changed fields, not the trace
twice. An add (an import's, a revert's insert) keeps only `{"version": N}`: the trace's row
is the copy. A removal (purge, expiry, a revert's delete) keeps the whole snapshot in
`before`, the only copy of a row that is gone.

Read back, such a row is made whole again (`expand`): walking a trace's rows newest first
from the row as it is now, the state after a row is the state before the next one with the
row's own new values laid over it, and the state before it is that with its previous values
laid over it. The fields a row changed are therefore exact; the others are as the journal
says they were, which is how a revert compares and restores them. Rows of the older shape
(whole snapshots) are read as they are, and start the walk again from their `before`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memgui.core.model import JournalEntry
from memgui.core.storage.journal_rows import LINK_OPS, ROW_OPS

# Ops whose rows are not a trace's state (links, other tables' rows, the review mark).
_NOT_TRACE_OPS = LINK_OPS | ROW_OPS | {"review"}


def changed_fields(
    before: dict[str, Any], after: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The fields `after` changed, as (their previous values, their new values), never `id`.

    A value of another type counts as changed even where Python calls it equal (`1` and
    `1.0`, `0` and `False`): the row keeps what was written."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    for name, value in after.items():
        if name == "id":
            continue
        was = before.get(name, _MISSING)
        if was is _MISSING or type(was) is not type(value) or was != value:
            old[name] = None if was is _MISSING else was
            new[name] = value
    return old, new


_MISSING = object()


def is_partial(entry: JournalEntry) -> bool:
    """A trace row of schema 5's shapes, not yet made whole: an in-place change's fields, or
    an add that names only its version (the trace's row holds the rest)."""
    return entry.after is not None and "id" not in entry.after and entry.op not in _NOT_TRACE_OPS


def added(snap: dict[str, Any]) -> dict[str, Any]:
    """What the journal keeps of a trace added: its version; the row itself is the copy."""
    return {"version": snap["version"]}


def expand_trace(
    rows: list[JournalEntry], current: dict[str, Any] | None
) -> dict[int, JournalEntry]:
    """One trace's rows (oldest first, through its newest row) made whole, by journal id.

    `current` is the trace's row now (None when there is none). A partial row whose later
    state is unknown (the trace is gone and nothing journaled its removal) is left as it is."""
    out: dict[int, JournalEntry] = {}
    state = current
    for entry in reversed(rows):
        if entry.op in _NOT_TRACE_OPS:
            continue
        if is_partial(entry):
            assert entry.after is not None
            if state is None:
                out[entry.id] = entry
                continue
            after = {**state, **entry.after}
            before = None if entry.before is None else {**after, **entry.before}
            out[entry.id] = _with_states(entry, before, after)
            state = before
        else:
            out[entry.id] = entry
            state = entry.before
    return out


def _with_states(
    entry: JournalEntry, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> JournalEntry:
    # As `dataclasses.replace`, at a fifth of its cost (a revert reads 100k of them).
    return JournalEntry(
        entry.id, entry.at, entry.actor, entry.batch_id, entry.op, entry.trace_id, before, after
    )


def expand(
    entries: list[JournalEntry],
    later_rows: Callable[[list[str], int], list[JournalEntry]],
    currents: Callable[[list[str]], dict[str, dict[str, Any]]],
) -> list[JournalEntry]:
    """`entries` with their partial rows made whole, in the same order.

    `entries` must hold every row of each trace they name from its first to their last id
    (a page of `journal_since`, a batch: one transaction's rows are one run of ids, a
    trace's history: all of them). `later_rows(ids,
    after_id)` gives those traces' rows after journal id `after_id`, oldest first;
    `currents(ids)` their rows now, by id (none for a trace not there). Each is called once,
    however many traces: reverting an import of 100,000 reads them in a few statements, not
    two per trace."""
    wanted = [e for e in entries if is_partial(e)]
    if not wanted:
        return entries
    ids = list(dict.fromkeys(e.trace_id for e in wanted))
    by_trace: dict[str, list[JournalEntry]] = {i: [] for i in ids}
    for row in entries:
        if row.trace_id in by_trace:
            by_trace[row.trace_id].append(row)
    for row in later_rows(ids, max(e.id for e in entries)):
        if row.trace_id in by_trace:
            by_trace[row.trace_id].append(row)
    now = currents(ids)
    whole: dict[int, JournalEntry] = {}
    for trace_id, rows in by_trace.items():
        whole.update(expand_trace(rows, now.get(trace_id)))
    return [whole.get(e.id, e) if is_partial(e) else e for e in entries]
