"""Which of a query word's other forms memgui_fts holds: a search asks only for those.

A word asks for ~40 forms (`word_forms`), most of which no memory holds ("filee",
"nameative"); each costs FTS5 a b-tree probe per index segment inside the ranking statement,
which at 1M traces doubled its time. A form no row holds matches nothing and adds nothing to
any row's bm25 (its term frequency is 0 in every row), so leaving it out changes no result.
What the index holds is asked once per form (one statement for a word's unknown forms) and
remembered per brain file while no row has entered the index since: FTS5 numbers each
flush of new rows (the newest origin in its structure record) and counts the rows and their
tokens (its averages record); when either moved, the forms found absent are asked again
(those found present are kept: asking for one no longer there finds nothing, as before).
A merge of segments moves neither: what a word's forms are is kept across the upkeep's
merges. Asking costs about what the probes it saves cost on a small index (5k rows: even);
on a bigger one each form left in the MATCH also costs bm25 work for every matching row
(20k: the asking and the smaller MATCH together take 0.7 of the full MATCH the first time a
word is searched, 0.3 after), so below `MIN_ROWS` every form is asked for, as before.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memgui.core.search import fts_merge, fulltext

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

MAX_KNOWN = 100_000  # forms remembered per brain file, at most
MIN_ROWS = 10_000  # rows in memgui_fts from which the forms are checked
# FTS5's averages (1) and structure (10) records.
STATE_SQL = "SELECT id, block FROM memgui_fts_data WHERE id IN (1, 10)"
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
        if fulltext.indexed_rows(db, "memgui_fts") < MIN_ROWS:
            return None
        blocks = dict(db.conn.execute(STATE_SQL))
    structure = bytes(blocks.get(10) or b"")
    newest = fts_merge.newest_origin(structure)
    # A legacy record has no origins: then any change of its segments counts.
    state = bytes(blocks.get(1) or b"") + (structure if newest is None else b"|%d" % newest)
    with _lock:
        known = _known.get(db.identity)
        if known is None or len(known.present) > MAX_KNOWN:
            known = _known[db.identity] = _Known(state, {})
        elif known.state != state:
            known.state = state
            known.present = {form: True for form, there in known.present.items() if there}
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
