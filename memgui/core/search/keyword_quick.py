"""The keyword answer from one short ranking and its rows, when nothing stands in the way.

`keyword.keyword_ranking` answers every case: FTS5 syntax and its rewrite, rows waiting for
the index, a read-only connection's stand-ins, filters that fail many rows, the proof by
slices that the best rows by −bm25 + strength are all in hand. An agent's plain search
(words, a small limit, nothing pending) needs little of that, and the general way took
6-20 % longer over it (5k-20k traces; docs/performance.md, "The agent's search, the short
way"). Here the index ranks the best `ranked_for(limit)` matches by bm25 (the ranking
function skips the row lengths of every match that cannot reach them), the rows of the
first `read_first(limit)` are read, those of the rest only when needed, and the answer is
checked to be exact: every match was ranked and read, or the `limit`-th best blended score
beats the most a match not read can score. When it is not, or anything else is unusual,
`rows` returns None and the general way answers, with the same result.
"""

from __future__ import annotations

import weakref
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
    197 of the bench's 200 two-word queries at 5k traces and on all 200 at 20k (a few more
    cost little: scoring every match is the cost)."""
    return 2 * limit + 4


def read_first(limit: int) -> int:
    """Ranked matches whose rows are read first (each row costs ~3 µs): `limit` and four
    more proved the answer on ~85 % of those queries; the rest of the ranking is read
    when they do not."""
    return limit + 4


def rows(
    brain: Brain, query: str, flt: TraceFilter, limit: int, brief: bool = False
) -> list[Any] | None:
    """The rows (`store.select_columns`; with `brief`, `store.BRIEF_COLUMNS`) of the best
    `limit` traces by −bm25 + strength that pass `flt`, then by id: what
    `searching.keyword_rows` answers; None when the general way must answer (not plain
    words, rows waiting for the index, a read-only connection, an answer not proved exact,
    a write by another program in between)."""
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
    answer = None
    with db.lock:
        # Read with no statement (two fewer a search than `read_state`): the statements
        # below see any commit it misses, and the version read after them differs then.
        version = keyword.version_state(db)
        if not keyword.nothing_pending_at_version(db, version):
            return None  # the general way indexes what waits first
        try:
            ranked = db.conn.execute(sql.ranking, (match, take)).fetchall()
        except apsw.SQLError as exc:
            if keyword.is_syntax_error(exc):
                return None  # the general way rewrites the query or says why
            raise
        if not ranked:
            return []
        now = brain.now()
        read: list[tuple[Any, ...]] = []
        done = 0  # ranked matches whose rows are read
        for upto in (min(read_first(limit), len(ranked)), len(ranked)):
            if upto <= done:
                continue
            rowids = [rowid for _, rowid in ranked[done:upto]]
            read += db.conn.execute(*sql.rows(now, rowids, brief)).fetchall()
            done = upto
            answer = _proved(ranked, done, read, limit, take)
            if answer is not None:
                break
        if keyword.version_state(db) != version:
            return None  # another program wrote before or between the statements
    if answer is None:
        backoff[0], backoff[1] = backoff[1], min(2 * backoff[1], BACKOFF_MAX)
    else:
        backoff[1] = 1
    return answer


def _proved(
    ranked: list[tuple[Any, ...]], done: int, read: list[tuple[Any, ...]], limit: int, take: int
) -> list[Any] | None:
    """The best `limit` rows by −bm25 + strength, then by id, from the rows read for the
    first `done` ranked matches (`read`: those that pass the filter), when they are exact:
    every match was ranked and read, or the `limit`-th best score beats the most a match
    not read can score (−bm25 of the best of them, plus the highest strength)."""
    by_rowid = {row[1]: row for row in read}
    scored = [
        (-bm25 + row[0], row[2], row)
        for bm25, rowid in ranked[:done]
        if (row := by_rowid.get(rowid)) is not None
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    if done < len(ranked) or len(ranked) == take:  # some match was not read
        # The next ranked one, or past the ranking: none better than its last.
        best_unread = ranked[done][0] if done < len(ranked) else ranked[-1][0]
        strongest = max(keyword.STRENGTH_MAX, max((row[0] for row in read), default=0.0))
        if len(scored) < limit or scored[limit - 1][0] <= -best_unread + strongest:
            return None
    return [row[1:] for _, _, row in scored[:limit]]
