"""Ranking the full-text matches of a query by bm25: exactly, at any size of brain.

The score is FTS5's bm25 on the index, over every match (`bm25.score_sql`: FTS5's own, or
the same arithmetic in C when built): `ORDER BY bm25(…)` (the
sorter keeps the best `LIMIT` rows; measured 12–15 % quicker than FTS5's `ORDER BY rank`,
which sorts through a second query of its own). Reading a trace row per match to check the
filter would cost as much as the ranking again (more when the row holds an embedding,
whose 3 KiB push the later columns into overflow pages), so the index ranks first and only
the best few rows are read and checked; the rows that fail (a forgotten trace, another
brain's, one the filter leaves out) are rare, and when too many fail, the next slice, four
times larger, is ranked and read, and past `RANKED_FIRST_MAX` the filter joins the ranking
statement. Each way gives the best `want` rows that pass the filter, by bm25 and then by
rowid.
"""

from __future__ import annotations

import copy
import functools
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import apsw

from memgui.core import decay
from memgui.core.errors import QuerySyntaxError
from memgui.core.model import TraceFilter
from memgui.core.search import (
    bm25,
    fulltext,
    stand_ins,
    stems,
    textindex,
    vocabulary,
    word_forms,
)
from memgui.core.search.filters import filter_sql
from memgui.core.storage import store

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import Database

# Ranked and read first, at most: past this many rows the filter joins the ranking
# statement (a selective filter: most matches would be read only to fail it).
RANKED_FIRST_MAX = 4096
SLICE_GROWTH = 4


# The index ranks this many times the matches wanted at once: a slice four times larger
# (and its spare rows) is then read from the same ranking.
RANK_AHEAD = 5
STRENGTH_MAX = 1.0  # a stored strength is checked to lie in [0, 1], and decay only lowers it
# Per brain connection, its last ranking of the brain's own indexes (not this connection's
# TEMP stand-ins): (table, MATCH, data version, its own changes), LIMIT asked, (bm25, rowid).
_MEMO_TABLES = frozenset({"memgui_fts", "memgui_stems", "memory_traces_fts"})
_last_ranking: weakref.WeakKeyDictionary[
    Database, tuple[tuple[Any, ...], int, list[tuple[Any, ...]]]
] = weakref.WeakKeyDictionary()


class KeywordHit(NamedTuple):
    rowid: int
    id: str
    bm25: float
    strength: float  # current, decayed
    # The trace's row as `store.select_columns` reads it, when the ranking read it with its
    # candidates (the result is built from it, not read again); None otherwise.
    row: tuple[Any, ...] | None = None
    # (PRAGMA data_version, this connection's total_changes) before the ranking read `row`:
    # while they are the same, `row` is the trace as it is now.
    seen: tuple[int, int] | None = None


def read_state(db: Database) -> tuple[int, int]:
    """What `KeywordHit.seen` is compared with (the caller holds `db.lock`)."""
    return int(db.conn.execute("PRAGMA data_version").get), db.conn.total_changes()


def version_state(db: Database) -> tuple[int, int]:
    """The pager's data version (moved by this connection's commits and by others' it has
    seen) and this connection's changes: read without a statement, so current only as of the
    connection's last statement (the caller holds `db.lock`). Equal before and after a few
    statements, they tell that the statements read the brain as the earlier one saw it."""
    return db.conn.data_version(), db.conn.total_changes()


def is_syntax_error(exc: apsw.Error) -> bool:
    # A MATCH expression FTS5 cannot use surfaces as a plain SQLError ("fts5: syntax error",
    # "unterminated string", "unknown special query: *x", "no such column: x" for `x:`);
    # storage failures have classes of their own (CorruptError, IOError, BusyError, ...).
    return type(exc) is apsw.SQLError


# The rows statement's list of rowids is padded to a multiple of this.
ROWIDS_STEP = 8


class _Statements(NamedTuple):
    """A search's SQL over one index for one filter, made once per connection."""

    where: str
    params: tuple[Any, ...]
    strength: str  # the decayed strength of a `memory_traces AS t` row (`?1`: now, in ms)
    ranking: str  # (bm25, rowid) of the best `?2` matches of `?1`
    rows_head: str  # ... WHERE rowid IN ( — the candidates' rows with their strength
    # The ranking of the best `?2` matches of `?1` joined with their rows (`?3`: now), in
    # rank order, each row read as it is stepped to: (bm25, decayed strength, the row's
    # columns), NULL columns for a match the filter leaves out; `keyword_quick`'s one
    # statement, with the whole row and with the brief.
    ranked_rows: tuple[str, str]

    def rows(self, now: int, rowids: list[Any]) -> tuple[str, tuple[Any, ...]]:
        """The statement reading the rows of `rowids` (those that pass the filter, in no
        order) and its arguments. The list is
        padded with its last rowid to a multiple of `ROWIDS_STEP`, so that a few texts serve
        every search: apsw keeps the statements of its last 100 runs, and one text per count
        had one in three searches compile the rows statement again."""
        padded = rowids + rowids[-1:] * (-len(rowids) % ROWIDS_STEP)
        sql = f"{self.rows_head}{','.join('?' * len(padded))}) AND {self.where}"
        return sql, (now, *padded, *self.params)


# Per brain connection: (table, brain id, filter) -> its statements.
STATEMENTS_KEPT = 64
_statements_of: weakref.WeakKeyDictionary[Database, dict[tuple[Any, ...], _Statements]] = (
    weakref.WeakKeyDictionary()
)


def statements(db: Database, table: str, brain_id: str, flt: TraceFilter) -> _Statements:
    made = _statements_of.setdefault(db, {})
    key = (table, brain_id, flt)
    found = made.get(key)
    if found is None:
        if len(made) >= STATEMENTS_KEPT:  # a filter's values are in its key: kept few
            made.clear()
        where, params = filter_sql(db, brain_id, flt)
        category = "category" if "category" in db.trace_columns else "NULL"
        strength = decay.strength_sql(category, "?1")
        ranking = (
            f"SELECT {bm25.score_sql(db.conn, table, '?1', '?2')} AS score, rowid "
            f"FROM {table} WHERE {table} MATCH ?1 ORDER BY score, rowid LIMIT ?2"
        )
        # The whole row comes with its decayed strength: the result is built from it.
        rows_head = (
            f"SELECT {strength}, {store.select_columns(db)} "
            "FROM memory_traces AS t NOT INDEXED WHERE rowid IN ("
        )
        ranked_rows = tuple(
            f"WITH r(bm25, hit) AS ({ranking}) "
            f"SELECT r.bm25, {decay.strength_sql(category, '?3')}, {columns} "
            f"FROM r LEFT JOIN memory_traces AS t ON t.rowid = r.hit AND {where} "
            f"ORDER BY r.bm25, r.hit"  # the ranking's order: no sort of its own
            for columns in (store.select_columns(db), store.BRIEF_COLUMNS)
        )
        found = made[key] = _Statements(
            where,
            tuple(params),
            strength,
            ranking,
            rows_head,
            (ranked_rows[0], ranked_rows[1]),
        )
    return found


def holds_the_best(hits: list[Any], limit: int, want: int) -> bool:
    """Whether the best `want` matches by bm25 (`KeywordHit`s, or their tuples) hold the
    best `limit` by −bm25 + strength: they are every match, or the `limit`-th best score
    among them beats the most any match left out can score (−bm25 of the last one plus the
    highest strength)."""
    if len(hits) < want:
        return True
    strongest = max(STRENGTH_MAX, *(h[3] for h in hits))
    scores = sorted((-h[2] + h[3] for h in hits), reverse=True)
    return len(scores) >= limit and scores[limit - 1] > -hits[-1][2] + strongest


class _Query:
    """One search's SQL pieces: the index, the MATCH text and the filter."""

    def __init__(self, brain: Brain, table: str, flt: TraceFilter) -> None:
        self.db: Database = brain.db
        self.table = table
        self.brain_id, self.flt = brain.brain_id, flt
        self.sql = statements(self.db, table, brain.brain_id, flt)
        self.params = self.sql.params
        self.ranked: list[tuple[Any, ...]] = []  # the last ranking `_best` read or reused
        self.asked = 0  # its LIMIT
        self.now = brain.now()
        self.seen: tuple[int, int] | None = None
        self.state: tuple[int, int] | None = None  # read_state's, if read just before
        # Set by `ranked_first` when its rows hold the best `best_of` by −bm25 + strength.
        self.proved = False

    def ranked_first(
        self, match: str, want: int, best_of: int | None = None
    ) -> list[tuple[Any, ...]] | None:
        """(rowid, id, bm25, decayed strength, row, seen) of the best `want` matches that pass
        the filter: the index ranks the best `take`, their rows are read and checked; None when
        too many fail even `RANKED_FIRST_MAX`, or more are wanted (the joined statement
        answers then). With `best_of`, as many as hold the best `best_of` by −bm25 +
        strength (`proved`): past the first slice, only the candidates that can still reach
        the `best_of`-th best blended score are read, each row once."""
        # A few more than wanted, for the rare rows that fail the filter (each read costs a
        # row and its decayed strength: 41 for 20 was a third of a search at 20k); for the
        # best `best_of` by the blend, a few more than those first, then as the bound asks.
        take = want + want // 8 + 2
        if best_of is not None:
            take = min(take, best_of + best_of // 4 + 2)
        if take > RANKED_FIRST_MAX:
            return None
        read: dict[int, tuple[Any, ...] | None] = {}  # rowid: its row, None when filtered out
        read_at = None
        while True:
            best, every = self._best(match, take, want)
            if not best:
                return []
            if self.seen != read_at:  # another program wrote since: every row read again
                read.clear()
                read_at = self.seen
            self._read([rowid for _, rowid in best if rowid not in read], read)
            out = []
            for rank, rowid in best:
                row = read[rowid]
                if row is not None:
                    out.append((rowid, row[2], rank, row[0], row[1:], self.seen))
            if every:  # every match was read
                self.proved = best_of is not None
                return out if best_of is not None else out[:want]
            if best_of is None:
                if len(out) >= want:
                    return out[:want]
                grown = take * SLICE_GROWTH
            else:
                enough = self._enough(out, best_of, best[-1][0], take, match)
                if enough is None:
                    self.proved = True
                    return out
                grown = enough
            if take >= RANKED_FIRST_MAX or (best_of is not None and grown > RANKED_FIRST_MAX):
                return None
            take = min(grown, RANKED_FIRST_MAX)

    def _read(self, rowids: list[int], read: dict[int, tuple[Any, ...] | None]) -> None:
        """The rows of `rowids` that pass the filter, with their decayed strength, into
        `read` (None for each that does not)."""
        if not rowids:
            return
        # NOT INDEXED: next to `brain_id = ?` and a list of rowids, SQLite's planner
        # prefers a brain_id index and walks every trace of the brain.
        rows: list[tuple[Any, ...]] = self.db.conn.execute(
            *self.sql.rows(self.now, rowids)
        ).fetchall()
        read.update(dict.fromkeys(rowids))
        for row in rows:
            read[row[1]] = row

    def _enough(
        self, out: list[tuple[Any, ...]], best_of: int, last_bm25: float, take: int, match: str
    ) -> int | None:
        """None when `out` holds the best `best_of` by −bm25 + strength: its `best_of`-th
        best score beats the most a candidate not read yet can score (−bm25 of the last one
        ranked plus the highest strength). Else how many ranked candidates to read: up to
        the first one that cannot reach that score. When the ranking at hand stops short of
        it, the index ranks again as far as it looks to lie (each ranking scores every
        match; a longer LIMIT reads more row lengths); past `RANKED_FIRST_MAX`, more than
        that (the joined statement answers)."""
        if len(out) < best_of:
            return take * SLICE_GROWTH
        strongest = max(STRENGTH_MAX, *(row[3] for row in out))
        reach = sorted((-row[2] + row[3] for row in out), reverse=True)[best_of - 1]
        if reach > -last_bm25 + strongest:
            return None

        def could() -> int:  # ranked candidates that could still score `reach` or more
            return sum(1 for score, _ in self.ranked if -score + strongest >= reach)

        count = could()
        while count == len(self.ranked) == self.asked < RANKED_FIRST_MAX:
            # Rank again, as far as the scores so far say the bound lies (bm25 grows about
            # evenly down the ranking), half as far again, and four times as far at least.
            first, last = self.ranked[0][0], self.ranked[-1][0]
            needed = strongest - reach  # the worst bm25 that can still reach
            far = RANKED_FIRST_MAX
            if last > first:
                far = int(count * (needed - first) / (last - first) * 1.5) + 1
            self._best(match, min(RANKED_FIRST_MAX, max(self.asked * SLICE_GROWTH, far)), 0)
            count = could()
        if count == len(self.ranked) == self.asked:
            return RANKED_FIRST_MAX + 1
        # One more than those (the first that cannot) proves the bound.
        return max(count + 1, take + 1)

    def _best(self, match: str, take: int, want: int) -> tuple[list[tuple[Any, ...]], bool]:
        """(bm25, rowid) of the best `take` matches by bm25, and whether they are every
        match. The index ranks `RANK_AHEAD` times `want` at once (scoring every match is
        the cost, not the LIMIT): the search's next, larger slice (`keyword_hits` asks four
        times as many when the blend with strength needs more) is read from this one's
        ranking while nothing was written in between, not ranked again."""
        db, table = self.db, self.table
        # Others' commits, and this connection's changes: read for the search's look at
        # the pending rows a moment ago, else now.
        self.seen, self.state = self.state or read_state(db), None
        key = (table, match, *self.seen)
        memo = _last_ranking.get(db) if table in _MEMO_TABLES else None
        if memo is not None and memo[0] == key and (memo[1] >= take or len(memo[2]) < memo[1]):
            asked, ranked = memo[1], memo[2]
        else:
            asked = max(take, RANK_AHEAD * want + 2)
            ranked = db.conn.execute(self.sql.ranking, (match, asked)).fetchall()
            if table in _MEMO_TABLES:
                _last_ranking[db] = (key, asked, ranked)
        self.ranked, self.asked = ranked, asked
        return ranked[:take], len(ranked) < asked and take >= len(ranked)

    def joined(self, match: str, want: int) -> list[tuple[Any, ...]]:
        """The best `want` matches that pass the filter, a trace row read per match."""
        table = self.table
        # CROSS JOIN keeps the full-text index outermost: the planner would otherwise walk a
        # trace index and evaluate the MATCH once per trace.
        sql = (
            f"SELECT t.rowid, t.id, {bm25.score_sql(self.db.conn, table, '?2')} AS score, "
            f"{self.sql.strength} "
            f"FROM {table} CROSS JOIN memory_traces AS t ON t.rowid = {table}.rowid "
            f"WHERE {table} MATCH ?2 AND {self.sql.where} ORDER BY score, t.rowid LIMIT ?"
        )
        params = (self.now, match, *self.params, want)
        return list(self.db.conn.execute(sql, params))

    def on(self, table: str) -> _Query:
        """The same search and filter over another full-text table."""
        other = copy.copy(self)
        other.table = table
        other.sql = statements(self.db, table, self.brain_id, self.flt)
        return other

    def run(self, match: str, want: int, best_of: int | None = None) -> list[tuple[Any, ...]]:
        rows = self.ranked_first(match, want, best_of)
        return rows if rows is not None else self.joined(match, want)


def keyword_ranking(
    brain: Brain, query: str, flt: TraceFilter, want: int, best_of: int | None = None
) -> list[KeywordHit]:
    """Up to `want` hits by bm25, best first; raw FTS5 syntax, then the rewrite. With
    `best_of`, enough hits (more or fewer than `want`) to hold the best `best_of` by −bm25
    + strength (`holds_the_best`)."""
    db = brain.db
    forms, has_words, stemmed = query_pieces(query)
    query = forms[0]
    if not has_words:
        return []
    # Another connection holding the write lock long leaves the marked rows unindexed:
    # searched then as a read-only connection searches them (see `stand_ins.index_unflushed`).
    flushed, state = _flush_before_search(db)
    either = textindex.either
    if stemmed is not None and "memgui_fts" in db.tables and stems.TABLE in db.tables:
        # Plain words (schema 9): one stemmed term a word (`stems`).
        table, match = stems.TABLE, stemmed
        agentos_rewrite = False
    elif "memgui_fts" in db.tables or (
        "memory_traces" in db.tables and stand_ins.index_unmigrated(db)
    ):
        table = "memgui_fts" if "memgui_fts" in db.tables else stand_ins.UNMIGRATED
        # Only the forms the index holds, when it holds every row (none waits unflushed).
        keep = (
            vocabulary.present_filter(db)
            if table == "memgui_fts" and flushed and not db.readonly
            else None
        )
        match = either([textindex.rewrite_query(word_forms.expand(f, keep)) for f in forms])
        agentos_rewrite = False
    elif db.has_agentos_fts:
        table, match = "memory_traces_fts", either([word_forms.expand(f) for f in forms])
        agentos_rewrite = True
    else:
        return []
    ranking = _Query(brain, table, flt)
    ranking.state = state
    with db.lock:
        # A read-only connection cannot index what a writer left pending: it searches those
        # rows in a small index of its own instead, and not their stale entries.
        unflushed = (
            stand_ins.index_unflushed(db, table)
            if table in stand_ins.STAND_INS and (db.readonly or not flushed)
            else set()
        )
        try:
            rows = _ranked(ranking, match, want, unflushed, best_of)
        except apsw.SQLError as exc:
            if not is_syntax_error(exc):
                raise
            # The rewrite, made only when FTS5 refused the query (most searches never need it).
            fallback = either(
                [
                    textindex.natural_language_query(f).replace('"', "")
                    if agentos_rewrite
                    else textindex.natural_language_query(f)
                    for f in forms
                ]
            )
            if not fallback or fallback == match:
                raise QuerySyntaxError(query) from exc
            try:
                rows = _ranked(ranking, fallback, want, unflushed, best_of)
            except apsw.SQLError as again:
                if is_syntax_error(again):
                    raise QuerySyntaxError(query) from again
                raise
    return [KeywordHit(*row) for row in rows]


# Per brain connection, the state (`read_state`) at which no row waited for the indexes,
# and the `version_state` read with it: while either is the same, neither this connection
# nor another program wrote one since.
_nothing_pending: weakref.WeakKeyDictionary[Database, tuple[tuple[int, int], tuple[int, int]]] = (
    weakref.WeakKeyDictionary()
)


def nothing_pending_at(db: Database, state: tuple[int, int]) -> bool:
    """Whether no row waits for the indexes at `state` (`read_state`), known from an
    earlier look at the same state."""
    known = _nothing_pending.get(db)
    return known is not None and known[0] == state


def nothing_pending_at_version(db: Database, version: tuple[int, int]) -> bool:
    """The same at `version` (`version_state`). Read before a statement, `version` may miss
    another program's latest commit: the caller reads it again after its statements (the
    first of them sees that commit and moves it)."""
    known = _nothing_pending.get(db)
    return known is not None and known[1] == version


def _flush_before_search(db: Database) -> tuple[bool, tuple[int, int] | None]:
    """Index what waits (`fulltext.flush_unless_busy`): whether nothing waits now, and the
    state read when nothing can have been written since the last look found nothing
    waiting (the pending table is not asked again then: one statement fewer a search)."""
    with db.lock:
        state = read_state(db)
        version = version_state(db)  # current: the PRAGMA has just read the brain
    if nothing_pending_at(db, state):
        # The same state, the version perhaps moved (a commit of this connection's that
        # changed no row): nothing waits at it either.
        _nothing_pending[db] = (state, version)
        return True, state
    flushed = fulltext.flush_unless_busy(db)
    if flushed and not db.readonly:
        # The state read before the look: a write after it changes the state, and the next
        # search looks again.
        _nothing_pending[db] = (state, version)
    return flushed, None


def _ranked(
    ranking: _Query, match: str, want: int, unflushed: set[int], best_of: int | None = None
) -> list[tuple[Any, ...]]:
    """The best `want` by bm25; with `best_of`, as many as hold the best `best_of` by
    −bm25 + strength (four times as many wanted, until they do)."""
    while True:
        if not unflushed:
            rows = ranking.run(match, want, best_of)
        else:
            rows = [r for r in ranking.run(match, want + len(unflushed)) if r[0] not in unflushed]
            rows += ranking.on(stand_ins.STAND_INS[ranking.table][0]).joined(match, want)
            rows = sorted(rows, key=lambda row: (row[2], row[0]))[:want]  # bm25: lower is better
        if best_of is None or ranking.proved or holds_the_best(rows, best_of, want):
            return rows
        want *= SLICE_GROWTH


@functools.lru_cache(maxsize=1024)
def query_pieces(query: str) -> tuple[tuple[str, ...], bool, str | None]:
    """What the text alone decides (each search of the same text asks again): its forms,
    whether it has words, and memgui_stems's MATCH for it (None: not plain words)."""
    forms = textindex.query_forms(query)
    stemmed = [stems.match(f) for f in forms]
    match = None if None in stemmed else textindex.either([m for m in stemmed if m is not None])
    return tuple(forms), bool(textindex.words(forms[0])), match
