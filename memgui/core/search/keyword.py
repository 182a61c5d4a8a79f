"""Ranking the full-text matches of a query by bm25, with bounded work on a big brain.

FTS5's bm25 costs a few microseconds for every matching row, and a trace row read per
match to check the filter costs as much again (more when the row holds an embedding, whose
3 KiB push the later columns into overflow pages). A brain of fewer than `BOUND_FROM_ROWS`
traces ranks in one joined statement; from there on, two measures keep a search quick:

- **Rank first, check after.** Without a filter beyond "live traces of this brain", FTS5
  ranks on its own and only the best few rows are read and checked; rows that fail (a
  forgotten trace, another brain's) are rare, and if too many fail the exact joined query
  runs instead.
- **Very common words score the most recent matches.** When a query matches more than
  `SCORED_MATCHES_MAX` traces, bm25 runs over the most recent of them only (rowids grow
  with time). Without a filter, FTS5 hands the matches newest first and stops at the
  bound; a filtered search finds its slice by counting matches in a recent slice of rowids,
  and one that finds fewer than it needs there runs again over every match, so filters
  still apply before the cut. A rare word of such a query (`kubernetes OR notes`, or a
  question's rewrite) keeps every one of its matches among the scored, however old: bm25
  ranks those first, and the cut would have dropped them.

Whether a brain is big is the number of rows its full-text index holds (FTS5 keeps it in
one small record), not its highest rowid, which purges leave high.
"""

from __future__ import annotations

import copy
import heapq
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

import apsw

from memgui.core import decay
from memgui.core.errors import QuerySyntaxError
from memgui.core.model import TraceFilter
from memgui.core.search import fulltext, textindex, word_forms
from memgui.core.search.filters import filter_sql

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import Database

SCORED_MATCHES_MAX = 4000
RARE_MATCHES_MAX = 256  # a query word with at most this many matches keeps all of them
PROBE_FRACTION = 8  # the recent slice counted first: 1/8 of the rowids
# Below this many rows every match is scored in one joined statement (quickest when the
# matches are few); from it on, rank first and bound very common words.
BOUND_FROM_ROWS = 8 * SCORED_MATCHES_MAX


class KeywordHit(NamedTuple):
    rowid: int
    id: str
    bm25: float
    strength: float  # current, decayed


def is_syntax_error(exc: apsw.Error) -> bool:
    # A MATCH expression FTS5 cannot use surfaces as a plain SQLError ("fts5: syntax error",
    # "unterminated string", "unknown special query: *x", "no such column: x" for `x:`);
    # storage failures have classes of their own (CorruptError, IOError, BusyError, ...).
    return type(exc) is apsw.SQLError


class _Query:
    """One search's SQL pieces: the index, the MATCH text and the filter."""

    def __init__(
        self, brain: Brain, table: str, flt: TraceFilter, words: list[str] | None = None
    ) -> None:
        self.db: Database = brain.db
        self.table = table
        self.words = words or []  # the query's words, to find its rare ones
        self.plain = flt == TraceFilter()  # live traces of this brain: checked after ranking
        self.where, self.params = filter_sql(self.db, brain.brain_id, flt)
        category = "category" if "category" in self.db.trace_columns else "NULL"
        self.score_columns = (
            f"strength, created_at, last_accessed, {category}, CASE WHEN json_valid(metadata) "
            "THEN json_extract(metadata, '$.decay.stability') END"
        )

    def lower_bound(self, match: str, top: int) -> int:
        """The rowid above which bm25 runs: 0 (every match) unless the query is very common."""
        width = top // PROBE_FRACTION
        recent = self.db.conn.execute(
            f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ? AND rowid > ?",
            (match, top - width),
        ).get
        if recent * PROBE_FRACTION <= SCORED_MATCHES_MAX:
            return 0
        # Matches spread roughly evenly over time: the slice that holds about the bound.
        return max(0, top - width * SCORED_MATCHES_MAX // recent)

    def ranked_plain(self, match: str, want: int) -> list[tuple[Any, ...]] | None:
        """(rowid, id, bm25, score columns...) best first: bm25 over the most recent
        `SCORED_MATCHES_MAX` matches, the best of them read and checked; None when too
        many fail the check."""
        take = want + want // 4 + 16
        # FTS5 hands the matches newest first and stops at the bound; picking the best here
        # costs less than its `ORDER BY rank`, which sorts through a second query of its own.
        scored = list(
            self.db.conn.execute(
                f"SELECT bm25({self.table}), rowid FROM {self.table} "
                f"WHERE {self.table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                (match, SCORED_MATCHES_MAX),
            )
        )
        if not scored:
            return []
        bounded = len(scored) == SCORED_MATCHES_MAX
        if bounded:
            oldest = scored[-1][1]
            scored += self._scored_among(match, self.rare_rowids(below=oldest))
        best = heapq.nsmallest(take, scored)  # bm25: lower is better; ties: older first
        # NOT INDEXED: next to `brain_id = ?` and a list of rowids, SQLite's planner prefers
        # a brain_id index and walks every trace of the brain.
        marks = ",".join("?" * len(best))
        rows = list(
            self.db.conn.execute(
                f"SELECT rowid, id, {self.score_columns} FROM memory_traces AS t NOT INDEXED "
                f"WHERE rowid IN ({marks}) AND {self.where}",
                (*(rowid for _, rowid in best), *self.params),
            )
        )
        by_rowid = {row[0]: row for row in rows}
        out = []
        for rank, rowid in best:
            row = by_rowid.get(rowid)
            if row is not None:
                out.append((rowid, row[1], rank, *row[2:]))
        every_match_seen = not bounded and len(best) == len(scored)
        if len(out) < want and not every_match_seen:
            return None  # more matches exist than were checked: rank them with the filter
        return out[:want]

    def rare_rowids(self, below: int) -> list[int]:
        """Rowids under `below` of the matches of each query word that has at most
        `RARE_MATCHES_MAX` of them (a superset of the query's own matches there)."""
        found: set[int] = set()
        for word in dict.fromkeys(w.lower() for w in self.words):
            phrase = textindex.rewrite_query(word).strip()
            if not phrase.startswith('"'):
                phrase = '"' + phrase.replace('"', '""') + '"'
            # The word in any of its forms, as the query asks for it.
            match = " OR ".join([phrase, *(f'"{form}"' for form in word_forms.forms(word))])
            try:
                rows = list(
                    self.db.conn.execute(
                        f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ? LIMIT ?",
                        (match, RARE_MATCHES_MAX + 1),
                    )
                )
            except apsw.SQLError:
                continue  # a word FTS5 cannot take alone
            if len(rows) <= RARE_MATCHES_MAX:
                found.update(r[0] for r in rows if r[0] < below)
        return sorted(found)

    def _scored_among(self, match: str, rowids: list[int]) -> list[tuple[Any, ...]]:
        """(bm25, rowid) of the query's matches among `rowids`."""
        if not rowids:
            return []
        marks = ",".join("?" * len(rowids))
        return list(
            self.db.conn.execute(
                f"SELECT bm25({self.table}), rowid FROM {self.table} "
                f"WHERE {self.table} MATCH ? AND rowid IN ({marks})",
                (match, *rowids),
            )
        )

    def _joined(
        self, match: str, lower: int, want: int, among: list[int] | None = None
    ) -> list[tuple[Any, ...]]:
        """bm25 over the matches that pass the filter: a trace row read per match. Only
        those above rowid `lower`, or only those `among` the rowids given."""
        table = self.table
        bound: tuple[int, ...]
        if among is None:
            where_rowid, bound = f"{table}.rowid > ?", (lower,)
        elif not among:
            return []
        else:
            where_rowid, bound = f"{table}.rowid IN ({','.join('?' * len(among))})", tuple(among)
        # CROSS JOIN keeps the full-text index outermost: given the rowid bound, the planner
        # would otherwise walk a trace index and evaluate the MATCH once per trace.
        sql = (
            f"SELECT t.rowid, t.id, bm25({table}) AS rank, {self.score_columns} "
            f"FROM {table} CROSS JOIN memory_traces AS t ON t.rowid = {table}.rowid "
            f"WHERE {table} MATCH ? AND {where_rowid} AND {self.where} ORDER BY rank LIMIT ?"
        )
        return list(self.db.conn.execute(sql, (match, *bound, *self.params, want)))

    def on(self, table: str) -> _Query:
        """The same search and filter over another full-text table."""
        other = copy.copy(self)
        other.table = table
        return other

    def run(self, match: str, want: int) -> list[tuple[Any, ...]]:
        if fulltext.indexed_rows(self.db, self.table) < BOUND_FROM_ROWS:
            return self._joined(match, 0, want)  # few matches: one statement is cheapest
        if self.plain:
            rows = self.ranked_plain(match, want)
            if rows is not None:
                return rows
        # The trace table answers max(rowid) from its b-tree; a virtual table would scan.
        top = self.db.conn.execute("SELECT max(rowid) FROM memory_traces").get or 0
        lower = self.lower_bound(match, top)
        rows = self._joined(match, lower, want)
        if len(rows) < want and lower > 0:
            rows = self._joined(match, 0, want)  # the filter needs older matches too
        elif lower > 0:
            rows += self._joined(match, 0, want, among=self.rare_rowids(below=lower + 1))
            rows = sorted(rows, key=lambda row: row[2])[:want]  # bm25: lower is better
        return rows


def keyword_ranking(brain: Brain, query: str, flt: TraceFilter, want: int) -> list[KeywordHit]:
    """Up to `want` hits by bm25, best first; raw FTS5 syntax, then the rewrite."""
    db = brain.db
    forms = textindex.query_forms(query)
    query = forms[0]
    if not textindex.words(query):
        return []
    # Another connection holding the write lock long leaves the marked rows unindexed:
    # searched then as a read-only connection searches them (see `_index_unflushed`).
    flushed = fulltext.flush_unless_busy(db)
    either = textindex.either
    if "memgui_fts" in db.tables or ("memory_traces" in db.tables and _index_unmigrated(db)):
        table = "memgui_fts" if "memgui_fts" in db.tables else UNMIGRATED
        match = either([textindex.rewrite_query(word_forms.expand(f)) for f in forms])
        fallback = either([textindex.natural_language_query(f) for f in forms])
    elif db.has_agentos_fts:
        table, match = "memory_traces_fts", either([word_forms.expand(f) for f in forms])
        fallback = either([textindex.natural_language_query(f).replace('"', "") for f in forms])
    else:
        return []
    ranking = _Query(brain, table, flt, textindex.words(query))
    with db.lock:
        # A read-only connection cannot index what a writer left pending: it searches those
        # rows in a small index of its own instead, and not their stale entries.
        unflushed = (
            _index_unflushed(db)
            if table == "memgui_fts" and (db.readonly or not flushed)
            else set()
        )
        try:
            rows = _ranked(ranking, match, want, unflushed)
        except apsw.SQLError as exc:
            if not is_syntax_error(exc):
                raise
            if not fallback or fallback == match:
                raise QuerySyntaxError(query) from exc
            try:
                rows = _ranked(ranking, fallback, want, unflushed)
            except apsw.SQLError as again:
                if is_syntax_error(again):
                    raise QuerySyntaxError(query) from again
                raise
    now = brain.now()
    hits = []
    for rowid, trace_id, rank, stored, created, accessed, cat, stability in rows:
        meta = {"decay": {"stability": stability}} if stability is not None else {}
        current = decay.current_strength(stored or 0.0, created or 0, accessed, meta, cat, now)
        hits.append(KeywordHit(rowid, trace_id, rank, current))
    return hits


UNFLUSHED = "memgui_fts_unflushed"  # a TEMP table: in memory, this connection's alone


def _index_unflushed(db: Database) -> set[int]:
    """Index the rows still pending (a writer stopped before it indexed them) in a TEMP
    table; their rowids, whose entries in the brain's index may be stale or another row's."""
    if "memgui_fts_pending" not in db.tables:
        return set()
    pending = {r[0] for r in db.conn.execute("SELECT rowid FROM memgui_fts_pending")}
    if not pending:
        return set()
    marks = ",".join("?" * len(pending))
    rows = list(db.conn.execute(f"{fulltext.ROW_TEXT_SQL} WHERE rowid IN ({marks})", list(pending)))
    fulltext.fill_temp_index(db, UNFLUSHED, rows)
    return pending


def _ranked(ranking: _Query, match: str, want: int, unflushed: set[int]) -> list[tuple[Any, ...]]:
    if not unflushed:
        return ranking.run(match, want)
    rows = [r for r in ranking.run(match, want + len(unflushed)) if r[0] not in unflushed]
    rows += ranking.on(UNFLUSHED)._joined(match, 0, want)
    return sorted(rows, key=lambda row: row[2])[:want]  # bm25: lower is better


UNMIGRATED = "memgui_fts_unmigrated"  # a TEMP table: in memory, this connection's alone
UNMIGRATED_MAX = 5_000  # traces indexed in memory at most (0.5–0.9 s, the first search)
# Per brain: the connection that holds the in-memory index (a read-only brain's may be
# opened again), the data version it last looked at, and whether the index serves (False:
# too many traces, which is not counted again until another write).
_unmigrated_built: weakref.WeakKeyDictionary[Database, tuple[object, int, bool]] = (
    weakref.WeakKeyDictionary()
)


def _index_unmigrated(db: Database) -> bool:
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
