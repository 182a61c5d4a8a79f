"""Agent activity: the journal's changes nobody has reviewed yet, and marking them reviewed.

A change is *unreviewed* when it belongs to this brain, was made by an actor other than a
person in memgui's window (`gui`), comes after the brain's review mark (`through`) and its
batch was not marked reviewed one by one since (`storage/review_rows.py`). The mark is the
brain's, not a window's: whoever reviews, in any window on any machine, reviews for all.

Reads are bounded whatever the journal's size. A batch is one transaction, and a brain's
writes commit one after another in journal-id order (SQLite lets one writer in at a time; a
PostgreSQL brain's writes each take the brain's journal lock first), so a batch's rows are
one run of the brain's journal ids and a mark at id N has seen every change up to N: walking
the journal newest first jumps from batch to batch with two index lookups each (the id,
then the batch index), never reading the rows of a batch it skips. A count stops at
`COUNT_CAP` and reads only the rows after the mark. The SQL is the engine's
(`storage/activity_rows.py`, `storage/postgres_activity.py`), reached through the brain's
`activity_rows()`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from memgui.core import journal
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import Changes, JournalEntry, check_id, check_int_range
from memgui.core.storage import journal_rows, review_rows

PERSON_ACTORS = frozenset({"gui"})  # a person in memgui's window: never listed for review
# Rows that come along with a change and are not one to a person (an import's graph rows).
COMPANION_OPS = frozenset(journal_rows.ROW_OPS | {review_rows.OP})
COUNT_CAP = 10_000  # an unreviewed count stops here ("10,000 or more")
SUMMARY_ROWS = 1_000  # a batch's ops are counted over its first rows only
MAX_BATCHES = 200  # batches in one page
MAX_STEPS = 2_000  # batches a page walks past (skipped ones included) before it stops
MAX_CHANGES = 1_000  # changes of one batch in one call

# What a change's trace (or link) is like now, against what the change left.
AS_WRITTEN = "as written"
UNDONE = "undone"  # back as it was before the change
CHANGED = "changed since"
GONE = "gone"


class ActivityRows(Protocol):
    """What activity reads and writes, in the engine's SQL (`storage/activity_rows.py`)."""

    brain_id: str

    def has_journal(self) -> bool: ...
    def mark(self) -> dict[str, Any]: ...
    def write_mark(self, before: dict[str, Any], after: dict[str, Any]) -> None: ...
    def count_after(
        self, through: int, actors: list[str], ops: list[str], skip: list[str], cap: int
    ) -> int: ...
    def newest(self, top: int, floor: int) -> tuple[int, str, str, str, int] | None: ...
    def oldest_after(self, after: int) -> tuple[int, str, str, str] | None: ...
    def batch_end(self, batch_id: str, last: bool) -> int: ...
    def batch_summary(
        self, batch_id: str, cap: int, first_rows: int
    ) -> tuple[int, dict[str, int]]: ...
    def batch_page(self, batch_id: str, after_id: int, limit: int) -> list[JournalEntry]: ...
    def trace_snapshot(self, trace_id: str) -> dict[str, Any] | None: ...
    def link_exists(self, from_id: Any, to_id: Any, kind: Any) -> bool: ...


@dataclass
class MarkWrite:
    """The review mark's write: its rows, and once it ended, what it changed."""

    rows: ActivityRows
    changes: Changes = field(default_factory=lambda: Changes(kind="review"))


class ActivityAccess(Protocol):
    def reading(self, purpose: str) -> AbstractContextManager[ActivityRows]: ...
    def writing(self, actor: str | None) -> AbstractContextManager[MarkWrite]: ...


class ActivityBrain(Protocol):
    """A brain of either engine (`Brain`, `SharedBrain`)."""

    def activity_rows(self) -> ActivityAccess: ...


@dataclass(frozen=True)
class ReviewMark:
    """Every change up to journal id `through` is reviewed, and so are `batches` (with their
    first and last journal ids) after it."""

    through: int = 0
    batches: dict[str, tuple[int, int]] = field(default_factory=dict)

    def reviewed(self, batch_id: str, last_id: int) -> bool:
        return last_id <= self.through or batch_id in self.batches


@dataclass(frozen=True)
class ActivityBatch:
    """One unreviewed batch: who wrote it, when, and how many changes of which kind."""

    batch_id: str
    actor: str
    first_id: int
    last_id: int
    at: int  # epoch ms of its last row
    size: int  # its journal rows, at most COUNT_CAP + 1 (more: "10,000 or more")
    ops: dict[str, int]  # op -> rows, over its first SUMMARY_ROWS rows

    def to_json(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "actor": self.actor,
            "first_id": self.first_id,
            "last_id": self.last_id,
            "at": self.at,
            "size": self.size,
            "ops": dict(self.ops),
        }


@dataclass(frozen=True)
class ActivityPage:
    batches: list[ActivityBatch]
    next_before: int | None  # pass as `before` for the next (older) page; None: no more


def review_mark(brain: ActivityBrain) -> ReviewMark:
    with brain.activity_rows().reading("reading the review mark") as rows:
        return _mark(rows.mark())


def _mark(stored: dict[str, Any]) -> ReviewMark:
    spans = {b: (span[0], span[1]) for b, span in stored["batches"].items()}
    return ReviewMark(stored["through"], spans)


def _check_exclude(exclude: Collection[str]) -> list[str]:
    if isinstance(exclude, str) or not isinstance(exclude, Collection):
        raise InvalidArgument("exclude", f"must be a collection of batch ids (got {exclude!r})")
    return [check_id("exclude", b, "batch id") for b in exclude]


def unreviewed_count(brain: ActivityBrain, exclude: Collection[str] = ()) -> int:
    """Unreviewed changes (companion rows aside), at most `COUNT_CAP`; `exclude` names
    batches not to count (the window's own)."""
    skip = _check_exclude(exclude)
    with brain.activity_rows().reading("counting unreviewed changes") as rows:
        if not rows.has_journal():
            return 0
        mark = rows.mark()
        return rows.count_after(
            mark["through"],
            sorted(PERSON_ACTORS),
            sorted(COMPANION_OPS),
            [*skip, *mark["batches"]],
            COUNT_CAP,
        )


def unreviewed_batches(
    brain: ActivityBrain,
    before: int | None = None,
    limit: int = 50,
    exclude: Collection[str] = (),
    after: int = 0,
) -> ActivityPage:
    """Unreviewed batches newest first, from journal id `before` down (exclusive; None: the
    end) to `after` (exclusive) or the review mark, at most `limit` of them."""
    check_int_range("limit", limit, 1, MAX_BATCHES)
    if before is not None:
        check_int_range("before", before, 1, 2**63 - 1)
    check_int_range("after", after, 0, 2**63 - 1)
    skip = frozenset(_check_exclude(exclude))
    with brain.activity_rows().reading("reading agent activity") as rows:
        if not rows.has_journal():
            return ActivityPage([], None)
        mark = _mark(rows.mark())
        floor = max(mark.through, after)
        top = 2**63 - 1 if before is None else before - 1
        found: list[ActivityBatch] = []
        for _ in range(MAX_STEPS):
            if top <= floor or len(found) >= limit:
                break
            row = rows.newest(top, floor)
            if row is None:
                top = floor
                break
            last_id, row_brain, actor, batch_id, at = row
            first_id = rows.batch_end(batch_id, last=False)
            if (
                row_brain == rows.brain_id
                and actor not in PERSON_ACTORS
                and batch_id not in skip
                and not mark.reviewed(batch_id, last_id)
            ):
                size, ops = rows.batch_summary(batch_id, COUNT_CAP + 1, SUMMARY_ROWS)
                if set(ops) - {review_rows.OP}:
                    found.append(ActivityBatch(batch_id, actor, first_id, last_id, at, size, ops))
            top = min(first_id, last_id) - 1
    return ActivityPage(found, top + 1 if top > floor else None)


def batch_changes(
    brain: ActivityBrain, batch_id: str, after_id: int = 0, limit: int = 200
) -> list[JournalEntry]:
    """A batch's journal rows after `after_id`, in order, at most `limit` (a page)."""
    check_id("batch_id", batch_id, "batch id")
    check_int_range("after_id", after_id, 0, 2**63 - 1)
    check_int_range("limit", limit, 1, MAX_CHANGES)
    with brain.activity_rows().reading("reading a batch") as rows:
        if not rows.has_journal():
            return []
        return rows.batch_page(batch_id, after_id, limit)


def mark_reviewed(
    brain: ActivityBrain,
    batch_ids: Iterable[str] = (),
    through: int | None = None,
    actor: str | None = None,
) -> Changes:
    """Mark batches reviewed, and with `through` every change up to that journal id. The
    mark then moves over the reviewed batches and the people's own that follow it, so
    it stays short. Journaled as one `review` row; a revert of the batch takes it back.
    Nothing new to mark writes nothing (the answer has no batch id)."""
    ids = list(batch_ids) if not isinstance(batch_ids, str) else [batch_ids]
    for i, batch_id in enumerate(ids):
        check_id(f"batch_ids[{i}]", batch_id, "batch id")
    if through is not None:
        check_int_range("through", through, 0, 2**63 - 1)
    with brain.activity_rows().writing(actor) as write:
        rows = write.rows
        before = rows.mark()
        after = {"through": before["through"], "batches": dict(before["batches"])}
        news = through is not None and through > before["through"]
        if news:
            after["through"] = through
        for batch_id in ids:
            last = rows.batch_end(batch_id, last=True)
            if not last:
                raise NotFound(batch_id, "batch")
            if last > after["through"] and batch_id not in after["batches"]:
                after["batches"][batch_id] = [rows.batch_end(batch_id, last=False), last]
                news = True
        if not news:
            return Changes(kind="review")  # nothing new reviewed: no batch to take back
        _compact(rows, after)
        rows.write_mark(before, after)
    return write.changes


def _compact(rows: ActivityRows, mark: dict[str, Any]) -> None:
    """Move `through` over what follows it and needs no review (batches reviewed one by
    one, a person's, another brain's), then forget the batches it has passed."""
    batches = mark["batches"]
    for _ in range(MAX_STEPS):
        row = rows.oldest_after(mark["through"])
        if row is None:
            break
        _id, row_brain, actor, batch_id = row
        if batch_id in batches:
            mark["through"] = max(mark["through"], batches[batch_id][1])
        elif row_brain != rows.brain_id or actor in PERSON_ACTORS:
            mark["through"] = max(mark["through"], rows.batch_end(batch_id, last=True))
        else:
            break
    mark["batches"] = {b: span for b, span in batches.items() if span[1] > mark["through"]}


def change_states(brain: ActivityBrain, entries: list[JournalEntry]) -> dict[int, str]:
    """What each change's trace or link is like now: `AS_WRITTEN` (as the change left it),
    `UNDONE` (as it was before), `CHANGED` (since, by anyone) or `GONE`; companion rows
    are left out."""
    out: dict[int, str] = {}
    with brain.activity_rows().reading("reading what changed since") as rows:
        for entry in entries:
            if entry.op in COMPANION_OPS:
                continue
            if entry.op in ("link", "unlink"):
                link = entry.after or entry.before or {}
                exists = rows.link_exists(link.get("from_id"), link.get("to_id"), link.get("kind"))
                out[entry.id] = AS_WRITTEN if exists == (entry.op == "link") else UNDONE
                continue
            out[entry.id] = _trace_state(rows.trace_snapshot(entry.trace_id), entry)
    return out


def _trace_state(now: dict[str, Any] | None, entry: JournalEntry) -> str:
    if now is None:
        return AS_WRITTEN if entry.after is None else GONE
    if entry.after is not None and journal.same_edits(now, entry.after):
        return AS_WRITTEN
    if entry.before is not None and journal.same_edits(now, entry.before):
        return UNDONE
    return CHANGED


class ActivityReview:
    """The review's calls as a brain of either engine offers them: each engine gives only
    `activity_rows` (its SQL), the rules above are the same."""

    def activity_rows(self) -> ActivityAccess:
        raise NotImplementedError  # the engine's

    def review_mark(self) -> ReviewMark:
        return review_mark(self)

    def unreviewed_count(self, exclude: Collection[str] = ()) -> int:
        """Changes nobody has reviewed yet, up to `COUNT_CAP`."""
        return unreviewed_count(self, exclude)

    def unreviewed_batches(
        self,
        before: int | None = None,
        limit: int = 50,
        exclude: Collection[str] = (),
        after: int = 0,
    ) -> ActivityPage:
        """A page of unreviewed batches, newest first (this module says which)."""
        return unreviewed_batches(self, before, limit, exclude, after)

    def batch_changes(
        self, batch_id: str, after_id: int = 0, limit: int = 200
    ) -> list[JournalEntry]:
        return batch_changes(self, batch_id, after_id, limit)

    def change_states(self, entries: list[JournalEntry]) -> dict[int, str]:
        return change_states(self, entries)

    def mark_reviewed(
        self, batch_ids: Collection[str] = (), through: int | None = None, actor: str | None = None
    ) -> Changes:
        return mark_reviewed(self, batch_ids, through, actor)
