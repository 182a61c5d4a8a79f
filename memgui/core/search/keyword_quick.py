"""The keyword answer from one short ranking and its rows, when nothing stands in the way.

`keyword.keyword_ranking` answers every case: FTS5 syntax and its rewrite, rows waiting for
the index, a read-only connection's stand-ins, filters that fail many rows, the proof by
slices that the best rows by −bm25 + strength are all in hand. An agent's plain search
(words, a small limit, nothing pending) needs little of that, and the general way took
6-20 % longer over it (5k-20k traces; docs/performance.md, "The agent's search, the short
way"). Here one statement ranks the best `ranked_for(limit)` matches by bm25 (the ranking
function skips the row lengths of every match that cannot reach them) and reads their rows
with their decayed strength in rank order, stepped only until the answer is proved exact:
the `limit`-th best blended score beats the most the next match can score, or every match
was ranked and read. When it is not, or anything else is unusual, `rows` returns None and
the general way answers, with the same result.
"""

from __future__ import annotations

import heapq
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import apsw

from memgui.core.model import TraceFilter
from memgui.core.search import keyword, stems

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import Database

# Above this limit the general way answers (its slices grow with what it finds).
LIMIT_MAX = 50
# An answer not proved costs a ranking the general way then does again: after a failure
# the general way answers the next search alone, after each further failure in a row
# twice as many (up to this many), so that on a brain where the quick way seldom proves
# its answer (at 1M traces the best matches' bm25 lie closer than strengths differ) it is
# tried once in that many searches.
BACKOFF_MAX = 64
# Per brain connection: [searches left to the general way alone, the skip after a failure].
_backoff: weakref.WeakKeyDictionary[Database, list[int]] = weakref.WeakKeyDictionary()


def ranked_for(limit: int) -> int:
    """Matches ranked for the best `limit`: twice as many and four more proved the answer on
    all of the bench's 200 two-word queries at 5k and 20k traces, most by the first 11-13
    rows (a longer LIMIT costs little: scoring every match is the cost, and the rows past
    the proof are not read)."""
    return 2 * limit + 4


def rows(
    brain: Brain, query: str, flt: TraceFilter, limit: int, brief: bool = False
) -> list[Any] | None:
    """The rows (`store.select_columns`; with `brief`, `store.BRIEF_COLUMNS`) of the best
    `limit` traces by −bm25 + strength that pass `flt`, then by id: what
    `searching.keyword_rows` answers; None when the general way must answer (not plain
    words, rows waiting for the index, a read-only connection, an answer not proved exact,
    a write by another program since this connection's last statement)."""
    db = brain.db
    if db.readonly or limit > LIMIT_MAX:
        return None
    _forms, has_words, match = keyword.query_pieces(query)
    if not has_words:
        return []
    if match is None or stems.TABLE not in db.tables or "memgui_fts" not in db.tables:
        return None
    backoff = _backoff.setdefault(db, [0, 1])
    if backoff[0] > 0:
        backoff[0] -= 1
        return None
    sql = keyword.statements(db, stems.TABLE, brain.brain_id, flt)
    take = ranked_for(limit)
    with db.lock:
        # Read with no statement (two fewer a search than `read_state`): the statement
        # below sees any commit it misses, and the version read after it differs then.
        version = keyword.version_state(db)
        if not keyword.nothing_pending_at_version(db, version):
            return None  # the general way indexes what waits first
        try:
            # One statement ranks and reads the rows in rank order, each row as it is
            # stepped to: its rows are read only until they prove the answer.
            cursor = db.conn.execute(
                sql.ranked_rows[brief], (match, take, brain.now(), *sql.params)
            )
        except apsw.SQLError as exc:
            if keyword.is_syntax_error(exc):
                return None  # the general way rewrites the query or says why
            raise
        try:
            answer = _proved(cursor, limit, take)
        finally:
            cursor.close()  # ends its read of the brain when it stopped early
        if keyword.version_state(db) != version:
            return None  # another program wrote since this connection's last statement
    if answer is None:
        backoff[0], backoff[1] = backoff[1], min(2 * backoff[1], BACKOFF_MAX)
    else:
        backoff[1] = 1
    return answer


def _proved(ranked: Iterable[tuple[Any, ...]], limit: int, take: int) -> list[Any] | None:
    """The best `limit` rows by −bm25 + strength, then by id, from the ranked matches with
    their rows in rank order (`keyword._Statements.ranked_rows`: bm25, decayed strength,
    the row, whose rowid is NULL when the filter leaves it out), when they are exact. Read
    until the `limit`-th best score beats the most the next match can score (its −bm25 plus
    the highest strength): no match after it can enter. Past the last ranked, the answer
    is exact when the ranking held every match, or when the bound holds for the last one
    (none not ranked is better). None when it is not."""
    kept: list[tuple[float, Any, tuple[Any, ...]]] = []  # (score, id, row) passing the filter
    best: list[float] = []  # the best `limit` scores so far, a min-heap
    strongest = keyword.STRENGTH_MAX
    count, bm25 = 0, 0.0
    for row in ranked:
        bm25 = row[0]
        if len(best) == limit and best[0] > -bm25 + strongest:
            return _best(kept, limit)
        count += 1
        if row[2] is None:
            continue  # the filter leaves it out
        score = -bm25 + row[1]
        kept.append((score, row[3], row))
        strongest = max(strongest, row[1])
        if len(best) < limit:
            heapq.heappush(best, score)
        else:
            heapq.heappushpop(best, score)
    # Every match ranked was read: exact when the LIMIT did not stop the ranking, or the
    # bound holds for the last one.
    if count == take and (len(best) < limit or best[0] <= -bm25 + strongest):
        return None
    return _best(kept, limit)


def _best(kept: list[tuple[float, Any, tuple[Any, ...]]], limit: int) -> list[Any]:
    kept.sort(key=lambda item: (-item[0], item[1]))
    return [row[2:] for _, _, row in kept[:limit]]
