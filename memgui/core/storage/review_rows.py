"""Where a person has reviewed a brain's journal up to: one `brain_meta` row per brain id.

The value (key `memgui_review`) is JSON: `through`, the journal id every change up to which is
reviewed, and `batches`, the batches after it reviewed one by one, each with its first and
last journal id (`{"b_…": [first, last]}`). Each change of it is journaled in the writing
batch (op `review`, row id `memgui_review`, the mark before and after), so other windows see
it arrive as they see any write, and a revert puts the earlier mark back.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memgui.core.errors import Conflict
from memgui.core.storage.journal_rows import journal
from memgui.core.storage.json_text import dumps

if TYPE_CHECKING:
    from memgui.core.model import JournalEntry
    from memgui.core.storage.db import Database, WriteBatch

KEY = "memgui_review"
OP = "review"


def empty() -> dict[str, Any]:
    return {"through": 0, "batches": {}}


def read(db: Database, brain_id: str) -> dict[str, Any]:
    """The mark as stored; a brain never reviewed (or a value another program mangled)
    reads as nothing reviewed."""
    if "brain_meta" not in db.tables:
        return empty()
    row = db.conn.execute(
        "SELECT value FROM brain_meta WHERE brain_id = ? AND key = ?", (brain_id, KEY)
    ).fetchone()
    return parse(row[0]) if row else empty()


def parse(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text)
        through = value["through"]
        batches = value["batches"]
        if isinstance(through, bool) or not isinstance(through, int) or through < 0:
            return empty()
        kept = {
            str(b): [int(span[0]), int(span[1])]
            for b, span in batches.items()
            if isinstance(span, list) and len(span) == 2
        }
    except (TypeError, ValueError, KeyError, AttributeError):
        return empty()
    return {"through": through, "batches": kept}


def write(
    db: Database,
    batch: WriteBatch,
    brain_id: str,
    before: dict[str, Any],
    after: dict[str, Any],
) -> None:
    """Store `after` (inside the caller's write) and journal the change from `before`."""
    db.conn.execute(
        "INSERT OR REPLACE INTO brain_meta(brain_id, key, value) VALUES (?, ?, ?)",
        (brain_id, KEY, dumps(after)),
    )
    journal(db, batch, brain_id, OP, KEY, before, after)


def undo(db: Database, brain_id: str, batch: WriteBatch, entry: JournalEntry) -> None:
    """Put back the mark a `review` row replaced, if nobody has moved it since."""
    current = read(db, brain_id)
    if entry.after is None or current != parse(dumps(entry.after)):
        raise Conflict.because(KEY, "the review mark changed since; nothing to take back")
    write(db, batch, brain_id, current, parse(dumps(entry.before)) if entry.before else empty())
