"""Keyword search (FTS5 bm25 blended with strength) and the filters every listing shares.

The raw query goes to FTS5 first (`"phrase"`, `AND/OR/NOT`, `prefix*` work); when FTS5
rejects it, the AgentOS natural-language rewrite runs instead; a query with no words finds
nothing. Only returned results are recorded as recalled. Semantic and hybrid modes plug in
through `memgui.core.hybrid` when an embedder is configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import apsw

from memgui.core import decay, fulltext, links, store, textindex
from memgui.core.db import Database
from memgui.core.errors import InvalidArgument, QuerySyntaxError
from memgui.core.model import SearchHit, SearchResult, TraceFilter, check_limit

if TYPE_CHECKING:
    from memgui.core.brain import Brain

MODES = ("auto", "keyword", "semantic", "hybrid")
OVERSAMPLE = 4


def filter_sql(
    db: Database, brain_id: str, flt: TraceFilter, alias: str = "t."
) -> tuple[str, list[Any]]:
    clauses = [f"{alias}brain_id = ?"]
    params: list[Any] = [brain_id]
    if flt.deleted:
        clauses.append(f"{alias}deleted != 0")
    elif not flt.include_deleted:
        clauses.append(f"{alias}deleted = 0")
    for name in ("type", "scope", "category"):
        value = getattr(flt, name)
        if value is not None:
            if name == "category" and "category" not in db.trace_columns:
                clauses.append("0")
                continue
            clauses.append(f"{alias}{name} = ?")
            params.append(value)
    if flt.scope_id is not None:
        if "scope_id" in db.trace_columns:
            clauses.append(f"{alias}scope_id = ?")
        else:
            clauses.append(
                f"coalesce(CASE WHEN json_valid({alias}metadata) THEN "
                f"json_extract({alias}metadata, '$.scopeId') END, '') = ?"
            )
        params.append(flt.scope_id)
    if flt.tag is not None:
        clauses.append(
            f"EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid({alias}tags) "
            f"THEN {alias}tags ELSE '[]' END) WHERE value = ?)"
        )
        params.append(flt.tag)
    return " AND ".join(clauses), params


def _is_syntax_error(exc: apsw.Error) -> bool:
    # A MATCH expression FTS5 cannot use surfaces as a plain SQLError ("fts5: syntax error",
    # "unterminated string", "unknown special query: *x", "no such column: x" for `x:`);
    # storage failures have classes of their own (CorruptError, IOError, BusyError, ...).
    return type(exc) is apsw.SQLError


class KeywordHit(NamedTuple):
    rowid: int
    id: str
    bm25: float
    strength: float  # current, decayed


def keyword_ranking(brain: Brain, query: str, flt: TraceFilter, want: int) -> list[KeywordHit]:
    """Up to `want` hits by bm25, best first; raw FTS5 syntax, then the rewrite.

    Only the columns the score needs are read here; full rows are fetched for the few
    results that survive the cut.
    """
    db = brain.db
    if not textindex.words(query):
        return []
    fulltext.flush(db)
    where, params = filter_sql(db, brain.brain_id, flt)
    if "memgui_fts" in db.tables:
        table, match = "memgui_fts", textindex.rewrite_query(query)
        fallback = textindex.natural_language_query(query)
    elif db.has_agentos_fts:
        table, match = "memory_traces_fts", query
        fallback = textindex.natural_language_query(query).replace('"', "")
    else:
        return []
    category = "t.category" if "category" in db.trace_columns else "NULL"
    sql = (
        f"SELECT t.rowid, t.id, bm25({table}) AS rank, t.strength, t.created_at, "
        f"t.last_accessed, {category}, CASE WHEN json_valid(t.metadata) THEN "
        "json_extract(t.metadata, '$.decay.stability') END "
        f"FROM {table} JOIN memory_traces t ON t.rowid = {table}.rowid "
        f"WHERE {table} MATCH ? AND {where} ORDER BY rank LIMIT ?"
    )
    with db.lock:
        try:
            rows = db.conn.execute(sql, (match, *params, want)).fetchall()
        except apsw.SQLError as exc:
            if not _is_syntax_error(exc):
                raise
            if not fallback or fallback == match:
                raise QuerySyntaxError(query) from exc
            try:
                rows = db.conn.execute(sql, (fallback, *params, want)).fetchall()
            except apsw.SQLError as again:
                if _is_syntax_error(again):
                    raise QuerySyntaxError(query) from again
                raise
    now = brain.now()
    hits = []
    for rowid, trace_id, rank, stored, created, accessed, cat, stability in rows:
        meta = {"decay": {"stability": stability}} if stability is not None else {}
        current = decay.current_strength(stored or 0.0, created or 0, accessed, meta, cat, now)
        hits.append(KeywordHit(rowid, trace_id, rank, current))
    return hits


def keyword_candidates(
    brain: Brain, query: str, flt: TraceFilter, want: int
) -> list[tuple[tuple[Any, ...], float]]:
    """(full row, bm25) pairs in bm25 order, for callers that need whole rows."""
    hits = keyword_ranking(brain, query, flt, want)
    if not hits:
        return []
    marks = ",".join("?" * len(hits))
    with brain.db.lock:
        rows = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces WHERE rowid IN ({marks})",
            [h.rowid for h in hits],
        ).fetchall()
    by_rowid = {r[0]: r for r in rows}
    return [(by_rowid[h.rowid], h.bm25) for h in hits if h.rowid in by_rowid]


def snapshots_by_rowid(brain: Brain, rowids: list[int]) -> dict[int, dict[str, Any]]:
    if not rowids:
        return {}
    marks = ",".join("?" * len(rowids))
    with brain.db.lock:
        rows = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces WHERE rowid IN ({marks})",
            rowids,
        ).fetchall()
    return {r[0]: store.row_to_snapshot(r) for r in rows}


def _prefixed(columns: str) -> str:
    # Qualify the plain column names with the trace table's alias (the legacy list has
    # expressions; those only name memory_traces columns, which are unambiguous).
    out = []
    for part in columns.split(", "):
        name = part.strip()
        out.append(f"t.{name}" if name.isidentifier() else name)
    return ", ".join(out)


def search(
    brain: Brain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mode: str,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    if not isinstance(query, str):
        raise InvalidArgument("query", f"must be a string (got {query!r})", query)
    check_limit(limit)
    if mode not in MODES:
        raise InvalidArgument("mode", f"must be one of {', '.join(MODES)} (got {mode!r})", mode)
    flt.validated()
    used = "keyword"
    hybrid = getattr(brain, "semantic", None)
    if mode in ("semantic", "hybrid", "auto") and hybrid is not None:
        result = hybrid.search(brain, query, flt, limit, mode)
        if result is not None:
            scored, used = result
            return _finish(brain, scored, used, expand_links, record_recall)
    if mode == "semantic" and hybrid is None:
        used = "keyword"
    hits = keyword_ranking(brain, query, flt, limit * OVERSAMPLE)
    ranked = sorted(hits, key=lambda h: (-(-h.bm25 + h.strength), h.id))[:limit]
    snaps = snapshots_by_rowid(brain, [h.rowid for h in ranked])
    scored = [(-h.bm25 + h.strength, h.rowid, snaps[h.rowid]) for h in ranked if h.rowid in snaps]
    return _finish(brain, scored, used, expand_links, record_recall)


def _finish(
    brain: Brain,
    scored: list[tuple[float, int, dict[str, Any]]],
    mode: str,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    if record_recall and scored:
        scored = record_recalls(brain, scored)
    now = brain.now()
    hits = []
    for score, rowid, snap in scored:
        trace = store.snapshot_to_trace(snap, rowid, now)
        related = tuple(links.related(brain, trace.id)) if expand_links else ()
        hits.append(SearchHit(trace=trace, score=score, related=related))
    return SearchResult(hits=tuple(hits), search_mode=mode)


def record_recalls(
    brain: Brain, scored: list[tuple[float, int, dict[str, Any]]]
) -> list[tuple[float, int, dict[str, Any]]]:
    """Apply the spaced-repetition update to the returned traces only."""
    out = []
    with brain.write("recall", kind="recall") as batch:
        now = brain.now()
        for score, rowid, _read in scored:
            row = store.fetch_row(brain.db, brain.brain_id, _read["id"])
            if row is None:
                continue  # purged since the search read it
            snap = store.row_to_snapshot(row)
            strength, metadata = decay.on_recall(
                snap["strength"],
                snap["created_at"],
                snap["last_accessed"],
                snap["retrieval_count"],
                snap["metadata"],
                snap["emotions"],
                snap["category"],
                now,
            )
            after = dict(
                snap,
                strength=strength,
                metadata=metadata,
                last_accessed=now,
                retrieval_count=snap["retrieval_count"] + 1,
            )
            # Access bookkeeping, not an edit: no version bump, no journal row, so a
            # person's open edit does not conflict with an agent's search.
            store.update_trace(
                brain.db, batch, brain.brain_id, rowid, snap, after, "recall", journaled=False
            )
            out.append((score, rowid, after))
        batch.traces.clear()
    return out
