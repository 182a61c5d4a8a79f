"""What a search on a shared brain returns: the hits of the snapshots it scored, their
recalls noted (`postgres_recall`), and the rows of ids that pass its filter now. Both
`shared_search` and `shared_cognitive` finish with these."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core import links
from memgui.core.model import SearchHit, SearchResult
from memgui.core.storage import postgres, postgres_recall, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain

Scored = list[tuple[float, dict[str, Any]]]


def finish(
    brain: SharedBrain,
    query: str,
    scored: Scored,
    used: str,
    expand_links: bool,
    record_recall: bool,
    where: tuple[str, list[Any]],
) -> SearchResult:
    """The hits of the snapshots `scored`, best first; their recalls noted unless
    `record_recall` is false (`where`: the search's filter, which each must still pass)."""
    now = brain.now()
    if record_recall and scored:
        ids = [snap["id"] for _, snap in scored]
        recalled = postgres_recall.note_recalls(brain.conn, brain.brain_id, where, ids, now)
        # One another writer holds just now is returned as read, its recall not noted.
        scored = [(score, recalled.get(s["id"], s)) for score, s in scored]
    hits = tuple(
        SearchHit(
            trace,
            score,
            tuple(brain.related(trace.id, links.MAX_RELATED)) if expand_links else (),
            query,
        )
        for score, snap in scored
        for trace in (store.snapshot_to_trace(snap, 0, now),)
    )
    return SearchResult(hits=hits, search_mode=used)


def snapshots(
    brain: SharedBrain, where: tuple[str, list[Any]], ids: list[str]
) -> dict[str, dict[str, Any]]:
    """The rows of `ids` that pass the search's filter now, by id (a trace forgotten since
    the matrix was read is left out)."""
    if not ids:
        return {}
    sql, params = where
    rows = brain.conn.execute(
        f"SELECT {postgres.COLUMNS} FROM memory_traces WHERE {sql} AND id = ANY(%s)",
        (*params, ids),
    ).fetchall()
    return {snap["id"]: snap for snap in map(store.row_to_snapshot, rows)}
