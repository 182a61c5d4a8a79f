"""Search: keyword ranking (bm25 blended with strength), recall, and the semantic modes.

The raw query goes to FTS5 first (`"phrase"`, `AND/OR/NOT`, `prefix*` work); when FTS5
rejects it, the AgentOS natural-language rewrite runs instead; a query with no words finds
nothing. Only returned results are recorded as recalled. Semantic and hybrid modes plug in
through `memgui.core.search.hybrid` when an embedder is configured.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from memgui.core import decay, links
from memgui.core.errors import BrainBusy, InvalidArgument
from memgui.core.model import (
    SearchHit,
    SearchResult,
    TraceFilter,
    check_filter,
    check_limit,
    check_text,
)
from memgui.core.search import keyword_quick
from memgui.core.search.filters import filter_sql
from memgui.core.search.keyword import KeywordHit, holds_the_best, keyword_ranking, read_state
from memgui.core.storage import store

if TYPE_CHECKING:
    from memgui.core.brain import Brain

__all__ = ["filter_sql", "holds_the_best", "keyword_ranking", "search"]

log = logging.getLogger(__name__)

MODES = ("auto", "keyword", "semantic", "hybrid")

OVERSAMPLE = 2  # the keyword mode ranks 2 × limit by bm25 first, 4 × as many when too few


def snapshots_by_rowid(
    brain: Brain, ranked: list[tuple[int, str]], flt: TraceFilter
) -> dict[int, dict[str, Any]]:
    """The rows of ranked (rowid, trace id) pairs that still pass `flt`, read in one
    statement. The ranking read the brain a moment before, and another connection may have
    written since: a trace forgotten or re-filed then drops out, and a rowid whose trace was
    purged (and given to a new trace) is not taken for that new trace."""
    if not ranked:
        return {}
    marks = ",".join("?" * len(ranked))
    where, params = filter_sql(brain.db, brain.brain_id, flt, alias="")
    with brain.db.lock:
        # NOT INDEXED: next to `brain_id = ?` the planner would walk a trace index.
        rows = list(
            brain.db.conn.execute(
                f"SELECT {store.select_columns(brain.db)} FROM memory_traces NOT INDEXED "
                f"WHERE rowid IN ({marks}) AND {where}",
                [rowid for rowid, _ in ranked] + params,
            )
        )
    expected = dict(ranked)
    snaps = {r[0]: store.row_to_snapshot(r) for r in rows}
    return {rowid: snap for rowid, snap in snaps.items() if snap["id"] == expected[rowid]}


def check_query(query: object, limit: int) -> None:
    """A search's text and limit, checked alike on both engines."""
    if not isinstance(query, str):
        raise InvalidArgument("query", f"must be a string (got {query!r})", query)
    check_text("query", query)
    check_limit(limit)


def search(
    brain: Brain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mode: str,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    check_query(query, limit)
    if mode not in MODES:
        every = (*MODES, "cognitive")  # cognitive is its own module (`Brain.search` picks it)
        raise InvalidArgument("mode", f"must be one of {', '.join(every)} (got {mode!r})", mode)
    check_filter(flt)
    used = "keyword"
    hybrid = getattr(brain, "semantic", None)
    if mode in ("semantic", "hybrid", "auto") and hybrid is not None:
        result = hybrid.search(brain, query, flt, limit, mode)
        if result is not None:
            scored, used = result
            return _finish(brain, query, scored, used, expand_links, record_recall, flt)
    if mode == "semantic" and hybrid is None:
        used = "keyword"
    scored = keyword_scored(brain, keyword_hits(brain, query, flt, limit), limit, flt)
    return _finish(brain, query, scored, used, expand_links, record_recall, flt)


def keyword_rows(
    brain: Brain,
    query: str,
    flt: TraceFilter,
    limit: int,
    *,
    quick: bool = True,
    brief: bool = False,
) -> list[Any] | None:
    """The rows (`store.select_columns`) of the keyword mode's answer, best first, without
    recall, for a caller that builds its own results from them; None when the rows must
    be read again (written since the ranking read them): `search` then. With `quick`,
    `keyword_quick` answers first when it can (the same rows; with `brief`, only
    `store.BRIEF_COLUMNS` of them are read, the others are NULL)."""
    check_query(query, limit)
    check_filter(flt)
    if quick:
        rows = keyword_quick.rows(brain, query, flt, limit, brief)
        if rows is not None:
            return rows
    hits = _best(keyword_hits(brain, query, flt, limit), limit)
    if hits and not _rows_current(brain, hits):
        return None
    return [h.row for h in hits]


def _best(hits: list[KeywordHit], limit: int) -> list[KeywordHit]:
    """The best `limit` by −bm25 + strength, then by id."""
    return sorted(hits, key=lambda h: (-(-h.bm25 + h.strength), h.id))[:limit]


def keyword_hits(brain: Brain, query: str, flt: TraceFilter, limit: int) -> list[KeywordHit]:
    """The best matches by bm25, enough of them to hold the best `limit` by −bm25 +
    strength: `limit * OVERSAMPLE` first, then the ones that can still reach the best
    `limit` (`keyword.keyword_ranking`'s `best_of`)."""
    return keyword_ranking(brain, query, flt, limit * OVERSAMPLE, best_of=limit)


def keyword_scored(
    brain: Brain, hits: list[KeywordHit], limit: int, flt: TraceFilter
) -> list[tuple[float, int, dict[str, Any]]]:
    """The keyword mode's answer from its ranking: −bm25 + strength, best `limit` rows."""
    ranked = _best(hits, limit)
    if ranked and _rows_current(brain, ranked):
        # The ranking read these rows under the same filter, and nothing was written since:
        # the answer is built from them, not read again.
        snaps = {h.rowid: store.row_to_snapshot(h.row) for h in ranked if h.row is not None}
    else:
        snaps = snapshots_by_rowid(brain, [(h.rowid, h.id) for h in ranked], flt)
    return [(-h.bm25 + h.strength, h.rowid, snaps[h.rowid]) for h in ranked if h.rowid in snaps]


def _rows_current(brain: Brain, hits: list[KeywordHit]) -> bool:
    """Whether every hit holds its row, read while the brain was as it is now."""
    seen = {h.seen if h.row is not None else None for h in hits}
    if len(seen) != 1 or None in seen:
        return False
    with brain.db.lock:
        return seen == {read_state(brain.db)}


def _finish(
    brain: Brain,
    query: str,
    scored: list[tuple[float, int, dict[str, Any]]],
    mode: str,
    expand_links: bool,
    record_recall: bool,
    flt: TraceFilter,
) -> SearchResult:
    # A brain opened read-only answers searches; it cannot note them as recalls. Nor does
    # one whose write lock another connection holds long: the answer is not held up for it.
    if record_recall and scored and not brain.db.readonly:
        try:
            scored = record_recalls(brain, scored, flt)
        except BrainBusy as busy:
            log.info("search answered without noting its recalls: %s", busy)
    now = brain.now()
    hits = []
    for score, rowid, snap in scored:
        trace = store.snapshot_to_trace(snap, rowid, now)
        related = tuple(links.related(brain, trace.id)) if expand_links else ()
        hits.append(SearchHit(trace=trace, score=score, related=related, query=query))
    return SearchResult(hits=tuple(hits), search_mode=mode)


def record_recalls(
    brain: Brain, scored: list[tuple[float, int, dict[str, Any]]], flt: TraceFilter
) -> list[tuple[float, int, dict[str, Any]]]:
    """Apply the spaced-repetition update to the returned traces only (those that, inside
    the recall's own transaction, still pass the search's filter: none forgotten since)."""
    out = []
    with brain.write("recall", kind="recall", wait_s=brain.db.bookkeeping_wait_s) as batch:
        now = brain.now()
        current = snapshots_by_rowid(brain, [(rowid, read["id"]) for _, rowid, read in scored], flt)
        for score, rowid, _read in scored:
            snap = current.get(rowid)
            if snap is None:
                continue  # forgotten, re-filed or purged since the search read it
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
    return out
