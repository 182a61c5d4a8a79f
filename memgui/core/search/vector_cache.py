"""Fast semantic ranking: a cached float32 matrix of the brain's live embedded traces.

sqlite-vec's `vec0` scans every vector through SQLite for each query (~200 ms at 100k × 768
on this machine); a normalised numpy matrix held in memory answers the same query with one
matrix-vector product (~20–40 ms). The matrix is loaded once per (file, brain) and catches up
with writes of any process by replaying `memory_traces_vec_log` (see docs/performance.md).

Membership is re-checked in SQL for every candidate, so a trace deleted, edited or filtered
out is never returned even if the matrix has not caught up yet. Filters apply before the cut:
candidates are walked best-first until `limit` of them pass the filter.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import apsw
import numpy as np

from memgui.core.search.embed import unpack_vector
from memgui.core.search.vectors import LOG_TABLE, embedded_sql

COMPACT_AFTER = 4096  # appended rows before the matrix is rebuilt in one piece
CHECK_CHUNK = 900  # candidate rowids checked per SQL statement
# Rowid lookups say NOT INDEXED: next to `brain_id = ?` and a list of rowids, SQLite's planner
# prefers a brain_id index and walks every trace of the brain (~0.3 s at 1M).


@dataclass
class _Matrix:
    dimensions: int = 0
    seq: int = 0
    rowids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    position: dict[int, int] = field(default_factory=dict)
    trace_ids: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_cache: dict[tuple[str, str], _Matrix] = {}
_cache_lock = threading.Lock()


def _normalised(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def _log_state(conn: apsw.Connection) -> tuple[int, int]:
    try:
        low, high = conn.execute(f"SELECT min(seq), max(seq) FROM {LOG_TABLE}").get
    except apsw.SQLError:  # no log yet (nothing embedded, or a read-only AgentOS brain)
        return 0, 0
    return int(low or 0), int(high or 0)


def _load(conn: apsw.Connection, brain_id: str, entry: _Matrix, dimensions: int) -> None:
    """Read every live embedded vector of the brain (after noting the log position)."""
    entry.seq = _log_state(conn)[1]
    rowids: list[int] = []
    trace_ids: list[str] = []
    blobs: list[bytes] = []
    for rowid, trace_id, blob in conn.execute(
        f"SELECT rowid, id, embedding FROM memory_traces WHERE brain_id = ? AND deleted = 0 "
        f"AND {embedded_sql(conn)} ORDER BY rowid",
        (brain_id,),
    ):
        if isinstance(blob, bytes) and len(blob) == 4 * dimensions and blob[:1] != b"[":
            rowids.append(rowid)
            trace_ids.append(trace_id)
            blobs.append(blob)
        else:  # the legacy JSON form, or a vector of another size: decode one by one
            vector = unpack_vector(blob)
            if vector is not None and len(vector) == dimensions:
                rowids.append(rowid)
                trace_ids.append(trace_id)
                blobs.append(vector.astype("<f4").tobytes())
    flat = np.frombuffer(b"".join(blobs), dtype="<f4")
    entry.dimensions = dimensions
    entry.vectors = _normalised(flat.reshape(len(rowids), dimensions))
    entry.rowids = np.asarray(rowids, dtype=np.int64)
    entry.alive = np.ones(len(rowids), dtype=bool)
    entry.position = {r: i for i, r in enumerate(rowids)}
    entry.trace_ids = trace_ids


def _apply(conn: apsw.Connection, brain_id: str, entry: _Matrix, rowids: set[int]) -> None:
    """Bring the named rows of the matrix up to date with the table."""
    current: dict[int, np.ndarray] = {}
    ids: dict[int, str] = {}
    ordered = sorted(rowids)
    for start in range(0, len(ordered), CHECK_CHUNK):
        chunk = ordered[start : start + CHECK_CHUNK]
        marks = ",".join("?" * len(chunk))
        for rowid, trace_id, blob in conn.execute(
            "SELECT rowid, id, embedding FROM memory_traces NOT INDEXED "
            f"WHERE rowid IN ({marks}) "
            f"AND brain_id = ? AND deleted = 0 AND {embedded_sql(conn)}",
            (*chunk, brain_id),
        ):
            vector = unpack_vector(blob)
            if vector is not None and len(vector) == entry.dimensions:
                current[rowid] = vector
                ids[rowid] = trace_id
    appended_rowids: list[int] = []
    appended: list[np.ndarray] = []
    for rowid in ordered:
        index = entry.position.get(rowid)
        vector = current.get(rowid)
        if index is not None and vector is not None:
            entry.vectors[index] = _normalised(vector[None, :])[0]
            entry.alive[index] = True
            entry.trace_ids[index] = ids[rowid]  # a purged trace's rowid, taken by a new one
        elif index is not None:
            entry.alive[index] = False
        elif vector is not None:
            appended_rowids.append(rowid)
            appended.append(vector)
    if appended:
        start = len(entry.rowids)
        entry.vectors = np.concatenate([entry.vectors, _normalised(np.stack(appended))])
        entry.rowids = np.concatenate([entry.rowids, np.asarray(appended_rowids, np.int64)])
        entry.alive = np.concatenate([entry.alive, np.ones(len(appended), dtype=bool)])
        entry.trace_ids.extend(ids[r] for r in appended_rowids)
        for offset, rowid in enumerate(appended_rowids):
            entry.position[rowid] = start + offset
    dead = int((~entry.alive).sum())
    if dead > COMPACT_AFTER and dead > len(entry.alive) // 4:
        keep = entry.alive
        entry.trace_ids = [t for t, alive in zip(entry.trace_ids, keep, strict=True) if alive]
        entry.vectors, entry.rowids = entry.vectors[keep], entry.rowids[keep]
        entry.alive = np.ones(len(entry.rowids), dtype=bool)
        entry.position = {int(r): i for i, r in enumerate(entry.rowids)}


def refresh(conn: apsw.Connection, brain_id: str, dimensions: int) -> _Matrix:
    """The up-to-date matrix of a brain (loaded whole, or caught up through the log)."""
    key = (conn.filename, brain_id)
    with _cache_lock:
        entry = _cache.setdefault(key, _Matrix())
    with entry.lock:
        low, high = _log_state(conn)
        stale = (
            entry.dimensions != dimensions
            or high < entry.seq  # another file now lives at this path
            or (entry.seq and low > entry.seq + 1)  # the log moved past us
            or entry.dimensions == 0
        )
        if not stale and high > entry.seq:
            changes = conn.execute(
                f"SELECT trace_rowid FROM {LOG_TABLE} WHERE seq > ? AND seq <= ? AND brain_id = ?",
                (entry.seq, high, brain_id),
            )
            touched = {r[0] for r in changes}
            if None in touched:
                stale = True
            else:
                _apply(conn, brain_id, entry, touched)
                entry.seq = high
        if stale:
            _load(conn, brain_id, entry, dimensions)
    return entry


def forget_cache() -> None:
    """Drop every cached matrix (tests, or to release memory)."""
    with _cache_lock:
        _cache.clear()


def rank(
    conn: apsw.Connection,
    brain_id: str,
    query: Sequence[float] | np.ndarray,
    limit: int,
    where: str | None = None,
    params: Sequence[object] = (),
    exclude_rowid: int | None = None,
    caught_up: _Matrix | None = None,
) -> list[tuple[str, float]]:
    """The `limit` nearest traces as (trace id, cosine similarity), best first, tie → id asc.

    `where` is a SQL condition over `memory_traces AS t` (the caller's filters); it is applied
    before the cut, so a selective filter still yields `limit` hits when that many exist.
    Without one the matrix answers alone (it holds exactly the live embedded traces), and
    given a matrix the caller has just `refresh`ed, `conn` is not used at all.
    """
    q = np.asarray(query, dtype=np.float32)
    norm = float(np.linalg.norm(q))
    if limit <= 0 or norm == 0.0:
        return []
    if caught_up is not None and where is None and caught_up.dimensions == len(q):
        entry = caught_up
    else:
        entry = refresh(conn, brain_id, len(q))
    with entry.lock:
        scores = entry.vectors @ (q / norm)
        scores[~entry.alive] = -np.inf
        rowids = entry.rowids
        trace_ids = entry.trace_ids
    if exclude_rowid is not None:
        scores[rowids == exclude_rowid] = -np.inf
    count = int(np.isfinite(scores).sum())
    found: list[tuple[str, float]] = []
    checked = np.zeros(len(scores), dtype=bool)
    seen = 0
    take = min(count, max(4 * limit, 64))
    # Walk the candidates best-first in growing slices until enough pass the filter.
    while seen < count and len(found) < limit:
        if take >= len(scores):
            order = np.argsort(-scores, kind="stable")[:take]
        else:
            top = np.argpartition(-scores, take - 1)[:take]
            order = top[np.argsort(-scores[top], kind="stable")]
        fresh = order[~checked[order]]
        checked[fresh] = True
        if where is None:
            found.extend((trace_ids[i], float(scores[i])) for i in fresh if scores[i] > 0.0)
        else:
            found.extend(_passing(conn, brain_id, rowids[fresh], scores[fresh], where, params))
        if scores[order[-1]] <= 0.0:
            break  # everything further away shares no meaning with the query
        seen = take
        take = min(count, take * 4)
    found.sort(key=lambda hit: (-hit[1], hit[0]))
    return found[:limit]


def _passing(
    conn: apsw.Connection,
    brain_id: str,
    rowids: np.ndarray,
    scores: np.ndarray,
    where: str,
    params: Sequence[object],
) -> list[tuple[str, float]]:
    """Candidates that pass the caller's filter, in order (the matrix vouches for the rest)."""
    score_of = {int(r): float(s) for r, s in zip(rowids, scores, strict=True)}
    ids: dict[int, str] = {}
    ordered = list(score_of)
    for start in range(0, len(ordered), CHECK_CHUNK):
        chunk = ordered[start : start + CHECK_CHUNK]
        marks = ",".join("?" * len(chunk))
        for rowid, trace_id in conn.execute(
            f"SELECT t.rowid, t.id FROM memory_traces AS t NOT INDEXED WHERE t.rowid IN ({marks}) "
            f"AND t.brain_id = ? AND ({where})",
            (*chunk, brain_id, *params),
        ):
            ids[rowid] = trace_id
    # A cosine of zero or less shares no meaning with the query: not a neighbour.
    return [(ids[r], score_of[r]) for r in ordered if r in ids and score_of[r] > 0.0]
