"""The keyword answer from one short ranking and its rows, when nothing stands in the way.

`keyword.keyword_ranking` answers every case: FTS5 syntax and its rewrite, rows waiting for
the index, a read-only connection's stand-ins, filters that fail many rows, the proof by
slices that the best rows by −bm25 + strength are all in hand. An agent's plain search
(words, a small limit, nothing pending) needs little of that, and the general way took
6-20 % longer over it (5k-20k traces; docs/performance.md, "The agent's search, the short
way"). Here one statement ranks the best `ranked_for(limit)` matches by bm25 (the ranking
function skips the row lengths of every match that cannot reach them) and reads their rows
with their decayed strength, and the answer is checked to be exact: every match was ranked,
or the `limit`-th best blended score beats the most a match not ranked can score. When it
is not, or anything else is unusual, `rows` returns None and the general way answers, with
the same result.
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
            # One statement: the ranking and the rows of all it ranks (a second statement
            # for the rest, when the first rows did not prove the answer, cost more).
            ranked = db.conn.execute(
                sql.ranked_rows[brief], (match, take, brain.now(), *sql.params)
            ).fetchall()
        except apsw.SQLError as exc:
            if keyword.is_syntax_error(exc):
                return None  # the general way rewrites the query or says why
            raise
        if keyword.version_state(db) != version:
            return None  # another program wrote since this connection's last statement
    answer = _proved(ranked, limit, take)
    if answer is None:
        backoff[0], backoff[1] = backoff[1], min(2 * backoff[1], BACKOFF_MAX)
    else:
        backoff[1] = 1
    return answer


def _proved(ranked: list[tuple[Any, ...]], limit: int, take: int) -> list[Any] | None:
    """The best `limit` rows by −bm25 + strength, then by id, from the ranked matches with
    their rows (`keyword._Statements.ranked_rows`: bm25, decayed strength, the row, whose
    rowid is NULL when the filter leaves it out), when they are exact: the ranking holds
    every match, or the `limit`-th best score beats the most a match not ranked can score
    (−bm25 of the last ranked, plus the highest strength)."""
    scored = [(-row[0] + row[1], row[3], row) for row in ranked if row[2] is not None]
    scored.sort(key=lambda item: (-item[0], item[1]))
    if len(ranked) == take:  # the LIMIT stopped it: some match may not be ranked
        worst = max(row[0] for row in ranked)  # none not ranked is better than the last
        strongest = max(keyword.STRENGTH_MAX, max((item[2][1] for item in scored), default=0.0))
        if len(scored) < limit or scored[limit - 1][0] <= -worst + strongest:
            return None
    return [row[2:] for _, _, row in scored[:limit]]
