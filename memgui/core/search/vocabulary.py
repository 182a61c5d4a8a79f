"""Which of a query word's other forms memgui_fts holds: a search asks only for those.

A word asks for ~40 forms (`word_forms`), most of which no memory holds ("filee",
"nameative"); each costs FTS5 a b-tree probe per index segment inside the ranking statement,
which at 1M traces doubled its time. A form no row holds matches nothing and adds nothing to
any row's bm25 (its term frequency is 0 in every row), so leaving it out changes no result.
What the index holds is asked once per form (one statement for a word's unknown forms) and
remembered per brain file while the index is unchanged: any write to memgui_fts rewrites
its structure record (whose segments carry ever-growing origin numbers), and then the forms
found absent are asked again (those found present are kept: asking for one no longer there
finds nothing, as before). Asking costs more than the probes it saves, so it pays only
from the second search of a word on, and on a big index, where each form left in the MATCH
also costs bm25 work for every matching row: below `MIN_ROWS` every form is asked for, as
before, and so is it by the first search after the index changed (while writes go on, what
is learnt would not last).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memgui.core.search import fulltext

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

MAX_KNOWN = 100_000  # forms remembered per brain file, at most
MIN_ROWS = 10_000  # rows in memgui_fts from which the forms are checked
STATE_SQL = "SELECT block FROM memgui_fts_data WHERE id = 10"  # FTS5's structure record
PRESENT_SQL = (
    "SELECT j.value FROM json_each(?) AS j "
    "WHERE EXISTS (SELECT 1 FROM memgui_fts WHERE memgui_fts MATCH '\"' || j.value || '\"')"
)


class _Known:
    __slots__ = ("state", "present")

    def __init__(self, state: bytes, present: dict[str, bool]) -> None:
        self.state = state
        self.present = present


# By the brain file (its device and inode: a file put in another's place starts afresh).
_known: dict[tuple[int, int] | None, _Known] = {}
_lock = threading.Lock()


def present_filter(db: Database) -> Callable[[Sequence[str]], tuple[str, ...]] | None:
    """A filter keeping the forms (lower-case ASCII words) memgui_fts holds now, or None
    below `MIN_ROWS` (every form asked for); the caller has indexed what was pending (a form
    only a pending row holds would be left out)."""
    with db.lock:
        row = db.conn.execute(STATE_SQL).fetchone()
        if fulltext.indexed_rows(db, "memgui_fts") < MIN_ROWS:
            return None
    state = bytes(row[0]) if row is not None and row[0] is not None else b""
    with _lock:
        known = _known.get(db.identity)
        if known is None or len(known.present) > MAX_KNOWN:
            _known[db.identity] = _Known(state, {})
            return None
        if known.state != state:
            # The index changed since the last search: writes are going on, and what is
            # asked now may be stale at the next search. This one asks for every form.
            known.state = state
            known.present = {form: True for form, there in known.present.items() if there}
            return None
        present = known.present

    def keep(forms: Sequence[str]) -> tuple[str, ...]:
        unknown = [form for form in forms if form not in present]
        if not unknown:
            return tuple(form for form in forms if present[form])
        with db.lock:
            found = {r[0] for r in db.conn.execute(PRESENT_SQL, (json.dumps(unknown),))}
        with _lock:
            # Remembered only while the index is as this search found it (another
            # connection's search may have moved the state on meanwhile).
            if known.present is present:
                for form in unknown:
                    present[form] = form in found
        return tuple(form for form in forms if form in found or present.get(form))

    return keep
