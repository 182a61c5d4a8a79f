"""The TEMP stand-ins a search ranks on when the brain's own index cannot serve it.

- Rows still pending for the indexes, on a connection that cannot index them (read-only, or
  a writer holding the lock long): indexed in a TEMP table of this connection's, in memory,
  and searched beside the brain's index (`keyword._ranked`).
- A brain memgui has not migrated (only AgentOS's `porter ascii` index): up to
  `UNMIGRATED_MAX` traces indexed in memory as memgui would index them.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from memgui.core.search import fulltext, stems
from memgui.core.storage import schema

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

# For each of the brain's indexes, a TEMP table of the rows still pending (in memory, this
# connection's alone) and its tokenizer.
STAND_INS = {
    "memgui_fts": ("memgui_fts_unflushed", schema.MEMGUI_TOKENIZE),
    stems.TABLE: ("memgui_stems_unflushed", schema.MEMGUI_STEMS_TOKENIZE),
}


def index_unflushed(db: Database, table: str) -> set[int]:
    """Index the rows still pending (a writer stopped before it indexed them) in `table`'s
    TEMP stand-in; their rowids, whose entries in the brain's index may be stale or another
    row's."""
    if "memgui_fts_pending" not in db.tables:
        return set()
    pending = {r[0] for r in db.conn.execute("SELECT rowid FROM memgui_fts_pending")}
    if not pending:
        return set()
    marks = ",".join("?" * len(pending))
    rows = list(db.conn.execute(f"{fulltext.ROW_TEXT_SQL} WHERE rowid IN ({marks})", list(pending)))
    name, tokenize = STAND_INS[table]
    fulltext.fill_temp_index(db, name, rows, tokenize)
    return pending


UNMIGRATED = "memgui_fts_unmigrated"  # a TEMP table: in memory, this connection's alone
UNMIGRATED_MAX = 5_000  # traces indexed in memory at most (0.5–0.9 s, the first search)
# Per brain: the connection that holds the in-memory index (a read-only brain's may be
# opened again), the data version it last looked at, and whether the index serves (False:
# too many traces, which is not counted again until another write).
_unmigrated_built: weakref.WeakKeyDictionary[Database, tuple[object, int, bool]] = (
    weakref.WeakKeyDictionary()
)


def index_unmigrated(db: Database) -> bool:
    """A brain memgui has not migrated has only AgentOS's `porter ascii` index, which finds
    no word of an unspaced script and folds no non-ASCII case. Up to `UNMIGRATED_MAX`
    traces, index them as memgui would, in memory, without writing to the file; again
    whenever another connection has written. False for a larger brain: AgentOS's index."""
    state = db.data_version()
    built = _unmigrated_built.get(db)
    if built is not None and built[0] is db.conn and built[1] == state:
        return built[2]
    with db.lock:
        rows = list(db.conn.execute(f"{fulltext.ROW_TEXT_SQL} LIMIT ?", (UNMIGRATED_MAX + 1,)))
        serves = len(rows) <= UNMIGRATED_MAX
        if serves:
            fulltext.fill_temp_index(db, UNMIGRATED, rows)
    _unmigrated_built[db] = (db.conn, state, serves)
    return serves
