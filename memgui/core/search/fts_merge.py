"""Merging memgui_fts's (and memgui_stems's) segments in small steps, off the writers' path.

FTS5 writes each flush of pending rows (`fulltext.FLUSH_AFTER`) as a new segment. With
FTS5's automerge on, the write that crossed a threshold merged 64 leaf pages' worth of
segments inline, and a write at 1M traces took up to ~50 ms. Schema 6 turns automerge off
(`schema.MEMGUI_FTS_CONFIG`): the upkeep thread (`core.maintenance.Maintainer`) merges
instead, `MERGE_PAGES` leaf pages a step, each step a write transaction of its own with a
pause between steps that lets every other writer in. A bulk write (an import, a migration,
a rebuild) merges at its end, inside its own transaction (`merge_all`), and lifts an index
lying all on level 0 to level 1 (`lift_step`). A flush of single writes merges level 0
itself when that level is small (`merge_inline`: a burst's segments, ~1 ms), so that a
search right after a burst does not read one segment per flush. `crisismerge` stays
the backstop when no upkeep runs (a script writing a brain): a level holding that many
segments is merged by the write that fills it, so the count never grows without bound.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import apsw

from memgui.core.errors import BrainBusy
from memgui.core.storage import schema

if TYPE_CHECKING:
    from memgui.core.storage.db import Database

log = logging.getLogger(__name__)

TABLE = "memgui_fts"
STRUCTURE_ID = 10  # FTS5's structure record in `{table}_data`
_V2_MARK = b"\xff\x00\x00\x01"  # a contentless_delete table's structure record (V2)
_V2_SEGMENT_EXTRA = 5  # origin (2), tombstone pages, tombstone entries, entries

# Leaf pages one upkeep step writes (FTS5's pages are ~4 KB): 1-4 ms at 1M traces here.
MERGE_PAGES = 16
# Between steps: longer than the sleeps of SQLite's busy handler up to then (1, 2, 5, 10,
# 15, 20, 25 ms), so a writer waiting for the lock takes it before the next step, another
# program's too (memgui's own look every millisecond: `storage/busy_wait.py`).
MERGE_GAP_S = 0.03
# Pages a step of a bulk write's closing merge writes (one statement, no one waits).
BULK_MERGE_PAGES = 2000
# A flush of single writes merges level 0 inside its own transaction when that is cheap
# (`merge_inline`): a burst's segments (32 rows, 2-3 pages each) merge as they come, and
# a search right after it reads a few segments, not one per flush (8 made a 5k-trace
# brain's ranking 2.3x slower than 1). A page merges in ~0.1 ms here: a small brain's
# whole index (105 pages at 5k traces) once, a burst's segments in ~1 ms.
INLINE_MERGE_PAGES = 128
FLUSH_SEGMENT_PAGES = 8  # at most, the segment of a flush of single writes (2-3 pages)
STEP_WAIT_S = 0.5  # for the write lock: past it, the merge waits for the next pass
PASS_BUDGET_S = 2.0  # one pass's steps at most, before the upkeep looks at its other work


class Level(NamedTuple):
    merging: int  # segments of this level an unfinished merge is taking as input
    segments: int
    pages: int = 0  # leaf pages of its segments


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's varint at `at`: (value, the offset after it)."""
    value = 0
    for i in range(9):
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def levels(conn: apsw.Connection, table: str = TABLE) -> list[Level]:
    """The index's levels, lowest first, read from its structure record (one row)."""
    try:
        row = conn.execute(f"SELECT block FROM {table}_data WHERE id = ?", (STRUCTURE_ID,))
        found = row.fetchone()
    except apsw.SQLError:  # no such table
        return []
    if found is None or not found[0] or len(found[0]) < 7:
        return []
    data = bytes(found[0])
    at = 4  # the configuration cookie
    extra = 0
    if data[at : at + 4] == _V2_MARK:
        at, extra = at + 4, _V2_SEGMENT_EXTRA
    count, at = _varint(data, at)
    _, at = _varint(data, at)  # segments in all
    _, at = _varint(data, at)  # write counter
    out = []
    for _ in range(count):
        merging, at = _varint(data, at)
        segments, at = _varint(data, at)
        pages = 0
        for _ in range(segments):
            _, at = _varint(data, at)  # segment id
            first, at = _varint(data, at)
            last, at = _varint(data, at)
            pages += last - first + 1
            for _ in range(extra):
                _, at = _varint(data, at)
        out.append(Level(merging, segments, pages))
    return out


def newest_origin(block: bytes) -> int | None:
    """The highest origin number of a V2 structure record's segments (a contentless_delete
    table's): FTS5 gives each flush of new rows the next origin, and a merge's output keeps
    its inputs' range, so it grows when rows are written and not when segments merge.
    None for a legacy record (no origins)."""
    data = bytes(block)
    if len(data) < 8 or data[4:8] != _V2_MARK:
        return None
    count, at = _varint(data, 8)
    _, at = _varint(data, at)
    _, at = _varint(data, at)
    newest = 0
    for _ in range(count):
        _, at = _varint(data, at)
        segments, at = _varint(data, at)
        for _ in range(segments):
            for _ in range(3):
                _, at = _varint(data, at)
            _, at = _varint(data, at)  # origin 1
            origin, at = _varint(data, at)
            newest = max(newest, origin)
            for _ in range(3):
                _, at = _varint(data, at)
    return newest


def segment_count(conn: apsw.Connection, table: str = TABLE) -> int:
    return sum(level.segments for level in levels(conn, table))


def needs_merge(found: list[Level]) -> bool:
    """Whether a merge step would do work: a merge under way, or a level holding
    `usermerge` segments (what FTS5's `merge` with a positive count merges)."""
    return any(level.merging or level.segments >= schema.MEMGUI_FTS_USERMERGE for level in found)


def merge_step(conn: apsw.Connection, pages: int, table: str = TABLE) -> bool:
    """One `merge` of about `pages` leaf pages, in the caller's transaction; whether it
    did any work (FTS5: two or more changes)."""
    before = conn.total_changes()
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (pages,))
    return conn.total_changes() - before >= 2


def merge_all(conn: apsw.Connection, table: str = TABLE) -> int:
    """`bulk_steps` to the end, in the caller's transaction; how many steps it took."""
    return sum(1 for _ in bulk_steps(conn, table))


def bulk_steps(conn: apsw.Connection, table: str = TABLE, lift: bool = True) -> Iterator[None]:
    """The end of a bulk write, in the caller's transaction, a step at a time: merge until no
    level holds `usermerge` segments, then (with `lift`) lift an index lying all on level 0
    (`lift_step`); yields after each step that did work."""
    while needs_merge(levels(conn, table)) and merge_step(conn, BULK_MERGE_PAGES, table):
        yield
    while lift and lift_step(conn, table):
        yield


def lift_step(conn: apsw.Connection, table: str = TABLE) -> bool:
    """At the end of a bulk write: when two or more segments hold the whole index and all lie
    on level 0 (a build of a few FTS5 flushes), a step of merging them into one on level 1
    (FTS5's incremental optimize: `merge` with a negative count), so that the small
    segments single writes add on level 0 merge without them (`merge_inline`); whether
    it did work. FTS5 leaves a lone segment where it is: `merge_inline` takes a small one."""
    # FTS5 holds the last rows written until its next segment: out with them first (a
    # `merge` of no pages writes them and merges nothing).
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', 0)")
    found = levels(conn, table)
    if not found:
        return False
    above = sum(level.segments for level in found[1:])
    # This lift under way: level 0 merging into its one output above. Anything else above
    # level 0 and an optimize would rewrite the whole index.
    under_way = found[0].merging > 0 and above == 1
    if not (under_way or (found[0].segments >= 2 and above == 0)):
        return False
    before = conn.total_changes()
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (-BULK_MERGE_PAGES,))
    return conn.total_changes() - before >= 2


def merge_inline(conn: apsw.Connection, table: str = TABLE) -> bool:
    """In a flush's transaction, after its rows went to `table` (FTS5 holds them until its
    next segment): merge level 0 when that segment makes it `usermerge` segments, FTS5's
    `merge` takes level 0 (no merge under way, no level above holding more) and it holds
    at most `INLINE_MERGE_PAGES`; whether it merged. Anything bigger waits for the upkeep."""
    found = levels(conn, table)
    if not found or any(level.merging for level in found):
        return False
    segments = found[0].segments + 1  # the flush's own: `merge` writes it out first
    if segments < schema.MEMGUI_FTS_USERMERGE or found[0].pages > INLINE_MERGE_PAGES:
        return False
    if any(level.segments > segments for level in found[1:]):
        return False
    # Pages enough for level 0 and the flush's segment; none left to start on a level above.
    return merge_step(conn, found[0].pages + FLUSH_SEGMENT_PAGES, table)


def tables(conn: apsw.Connection) -> list[str]:
    """memgui's full-text tables that merge only when asked: memgui_stems from schema 9 on
    (first: every search of plain words ranks on it), and memgui_fts (the same rows, so
    the same segments come and go)."""
    return [table for table in (schema.STEMS_TABLE, TABLE) if configured(conn, table)]


AGENTOS_TABLE = "memory_traces_fts"


def upkeep_tables(conn: apsw.Connection) -> list[str]:
    """What the upkeep merges: memgui's tables (`tables`) and, in a brain that has them,
    AgentOS's index, which memgui's writes fill without merging it
    (`fulltext._agentos_index_unmerged`)."""
    found = tables(conn)
    if (
        found
        and conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (AGENTOS_TABLE,)
        ).fetchone()
    ):
        found.append(AGENTOS_TABLE)
    return found


def configured(conn: apsw.Connection, table: str = TABLE) -> bool:
    """Whether `table` merges only when asked (schema 6's automerge 0)."""
    try:
        row = conn.execute(f"SELECT v FROM {table}_config WHERE k = 'automerge'").fetchone()
    except apsw.SQLError:
        return False
    return row is not None and row[0] == 0


def merge_pass(
    db: Database,
    stop: threading.Event | None = None,
    pages: int = MERGE_PAGES,
    gap_s: float = MERGE_GAP_S,
    budget_s: float = PASS_BUDGET_S,
) -> int:
    """Upkeep: merge a step at a time, each in a short write transaction of its own, until
    no merge is due, `stop` is set, `budget_s` has passed after a step (the upkeep's other
    work goes first, then the next pass goes on: `merge_due`) or another connection holds
    the lock past `STEP_WAIT_S`; how many steps did work. Only a current brain (automerge
    off)."""
    if db.readonly or not db.is_current:
        return 0
    with db.lock:
        merged = upkeep_tables(db.conn)
    done = 0
    ends = time.monotonic() + budget_s
    while (stop is None or not stop.is_set()) and (done == 0 or time.monotonic() < ends):
        with db.lock:
            table = _most_due(db.conn, merged)
            if table is None:
                break
            try:
                with db.write("sweep", "merge the index", kind="index", wait_s=STEP_WAIT_S):
                    worked = merge_step(db.conn, pages, table)
            except BrainBusy:
                log.info("%s: the index merge waits: the brain is busy", db.path)
                break
        if not worked:  # nothing FTS5 would merge there: the other tables' turn
            merged.remove(table)
            continue
        done += 1
        if stop is not None:
            stop.wait(gap_s)
        else:
            time.sleep(gap_s)
    return done


def _most_due(conn: apsw.Connection, tables: list[str]) -> str | None:
    """Of `tables`, the one a merge step is due in whose fullest level holds the most
    segments (the first on a tie); None when none is due. A level reaching `crisismerge`
    segments is merged inside the write that fills it: each table's turn comes before that,
    even while another has a long merge under way (a step is due there at every look, and
    taking the tables in order left AgentOS's index at 15 segments a level at 1M)."""
    found = {table: levels(conn, table) for table in tables}
    due = [table for table in tables if needs_merge(found[table])]
    if not due:
        return None
    return max(due, key=lambda table: max(level.segments for level in found[table]))


def merge_due(db: Database) -> bool:
    """Whether a merge step would do work on any of the brain's merged tables."""
    if db.readonly or not db.is_current:
        return False
    with db.lock:
        return any(needs_merge(levels(db.conn, table)) for table in upkeep_tables(db.conn))
