"""Finding each step's candidates (upstream-notes §B.4), from what planning read; no writes.

Steps see the brain as the earlier steps would leave it, as AgentOS runs them in order: a
trace the plan prunes is merged, strengthened, clustered and compacted by no later step; a
trace a merge would soft-delete neither.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from memgui.core import decay
from memgui.core.consolidate_plan import (
    LEARNING_RATE,
    CompactCandidate,
    ConsolidationOptions,
    MergeCluster,
    MergeMember,
    PruneCandidate,
    StrengthenCandidate,
    StrengthenPair,
)
from memgui.core.graph import node_properties
from memgui.core.model import DAY_MS
from memgui.core.progress import Cancelled, Progress
from memgui.core.storage import store

if TYPE_CHECKING:
    from memgui.core.brain import Brain

Snap = dict[str, Any]
# What merging by meaning compares: trace id -> its row in a matrix of normalised vectors.
Vectors = tuple[dict[str, int], Any]
SIMILARITY_BLOCK = 512  # rows of the similarity matrix computed at once
CO_USES = "coUses"  # an edge's metadata: query key -> co-uses counted


def live_traces(brain: Brain) -> dict[str, tuple[int, Snap]]:
    """Every live trace of the brain: id -> (rowid, snapshot), in rowid order."""
    if "memory_traces" not in brain.db.tables:
        return {}
    with brain.db.lock, brain.db.reading("reading the brain to consolidate"):
        rows = brain.db.conn.execute(
            f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
            "WHERE brain_id = ? AND deleted = 0 ORDER BY rowid",
            (brain.brain_id,),
        ).fetchall()
    return {
        str(r[1]): (r[0] if isinstance(r[0], int) else 0, store.row_to_snapshot(r)) for r in rows
    }


# --- prune --------------------------------------------------------------------------------


def prune(
    traces: dict[str, tuple[int, Snap]], options: ConsolidationOptions, now: int
) -> list[PruneCandidate]:
    """Live traces whose current strength is below the threshold (emotion is not weighed,
    as in AgentOS's loop)."""
    out: list[PruneCandidate] = []
    for trace_id, (_rowid, s) in traces.items():
        strength = decay.current_strength(
            s["strength"], s["created_at"], s["last_accessed"], s["metadata"], s["category"], now
        )
        if strength < options.prune_threshold:
            since = s["last_accessed"] if s["last_accessed"] is not None else s["created_at"]
            out.append(
                PruneCandidate(
                    trace_id=trace_id,
                    content=s["content"],
                    strength=strength,
                    threshold=options.prune_threshold,
                    stability_ms=decay.stability_of(s["metadata"], s["category"]),
                    idle_days=max(0, now - since) / DAY_MS,
                )
            )
    return out


# --- merge --------------------------------------------------------------------------------


class _Union:
    """Union-find over trace ids; remembers the pair that joined each id first."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.joined: dict[str, tuple[str, float | None]] = {}

    def find(self, a: str) -> str:
        parent = self.parent
        root = a
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(a, a) != root:  # path compression
            parent[a], a = root, parent[a]
        return root

    def union(self, a: str, b: str, similarity: float | None) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        self.parent[rb] = ra
        self.parent.setdefault(ra, ra)
        self.joined.setdefault(b, (a, similarity))
        self.joined.setdefault(a, (b, similarity))

    def groups(self) -> list[list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for node in self.parent:
            out[self.find(node)].append(node)
        return [g for g in out.values() if len(g) >= 2]


def _group_key(s: Snap, options: ConsolidationOptions) -> tuple[str, ...]:
    key: tuple[str, ...] = ()
    if not options.merge_across_scopes:
        key += (s["scope"], s["scope_id"])
    if not options.merge_across_types:
        key += (s["type"],)
    return key


def merge(
    vectors: Callable[[], Vectors | None] | None,
    traces: dict[str, tuple[int, Snap]],
    options: ConsolidationOptions,
    skip: set[str],
    cancel_requested: Callable[[], bool],
) -> Iterator[Progress | list[MergeCluster]]:
    """Clusters of traces to merge, the rule of both engines: the same text (SHA-256)
    always; cosine similarity above the threshold on the traces' stored vectors when
    `vectors` finds some (`file_vectors`, `shared_vectors.rows_of`; None: the text alone).
    Never across scopes or types unless the options ask; the survivor is the most
    retrieved member, the first read on a tie. Yields progress, then the clusters."""
    groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for trace_id, (_rowid, s) in traces.items():
        if trace_id not in skip:
            groups[_group_key(s, options)].append(trace_id)
    union = _Union()
    for ids in groups.values():
        first_of: dict[str, str] = {}
        for trace_id in ids:
            digest = store.content_hash(traces[trace_id][1]["content"])
            if digest in first_of:
                union.union(first_of[digest], trace_id, None)
            else:
                first_of[digest] = trace_id
    found = vectors() if vectors is not None else None
    if found is not None:
        yield from _similar(found, groups, options.merge_threshold, union, cancel_requested)
    clusters: list[MergeCluster] = []
    order = {trace_id: i for i, trace_id in enumerate(traces)}
    for number, ids in enumerate(
        sorted(
            (sorted(g, key=order.__getitem__) for g in union.groups()), key=lambda g: order[g[0]]
        ),
        start=1,
    ):
        snaps = [traces[i][1] for i in ids]
        best = max(range(len(snaps)), key=lambda i: (snaps[i]["retrieval_count"], -i))
        members = []
        for trace_id, s in zip(ids, snaps, strict=True):
            other, similarity = union.joined.get(trace_id, (ids[0], None))
            evidence = (
                f"same text as {other}"
                if similarity is None
                else f"cosine similarity {similarity:.4f} to {other}"
            )
            members.append(
                MergeMember(
                    trace_id=trace_id,
                    content=s["content"],
                    type=s["type"],
                    scope=s["scope"],
                    scope_id=s["scope_id"],
                    retrieval_count=s["retrieval_count"],
                    created_at=s["created_at"],
                    tags=tuple(s["tags"]),
                    evidence=evidence,
                    similarity=similarity,
                )
            )
        clusters.append(
            MergeCluster(
                number=number,
                members=members,
                survivor_id=ids[best],
                content=snaps[best]["content"],
                threshold=options.merge_threshold,
            )
        )
    yield clusters


def file_vectors(brain: Brain, traces: dict[str, tuple[int, Snap]]) -> Vectors | None:
    """A file's stored vectors of `traces` (the brain's matrix in memory); None when it
    has none."""
    from memgui.core.search import hybrid, vectors

    conn, bid = brain.db.conn, brain.brain_id
    with brain.db.lock, brain.db.reading("reading the brain's vectors"):
        if not hybrid.has_embeddings(conn, bid):
            return None
        dimensions = vectors.pinned_model(conn, bid)[1]
        if not dimensions:
            return None
        from memgui.core.search import vector_cache  # numpy: only once vectors are compared

        matrix = vector_cache.refresh(conn, bid, dimensions)
    with matrix.lock:
        position = {
            trace_id: matrix.position[rowid]
            for trace_id, (rowid, _s) in traces.items()
            if rowid in matrix.position
        }
        return position, matrix.vectors


def _similar(
    found: Vectors,
    groups: dict[tuple[str, ...], list[str]],
    threshold: float,
    union: _Union,
    cancel_requested: Callable[[], bool],
) -> Iterator[Progress]:
    """Join traces whose vectors are closer than the threshold, group by group, a block of
    rows at a time (cancellable between blocks)."""
    import numpy as np

    position, vectors_all = found
    total = sum(len(ids) for ids in groups.values())
    done = 0
    for ids in groups.values():
        inside = [(i, position[i]) for i in ids if i in position]
        done += len(ids)
        if len(inside) < 2:
            continue
        names = [name for name, _ in inside]
        block = vectors_all[[p for _, p in inside]]
        for start in range(0, len(names), SIMILARITY_BLOCK):
            if cancel_requested():
                raise Cancelled("the consolidation plan was cancelled")
            scores = block[start : start + SIMILARITY_BLOCK] @ block.T
            rows, cols = np.nonzero(scores > threshold)
            for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
                a = start + r
                if c > a:
                    union.union(names[a], names[c], float(scores[r, c]))
            yield Progress(done, total, f"comparing vectors: {done} of {total} traces")


# --- strengthen ---------------------------------------------------------------------------


def edge_id(source_id: str, target_id: str) -> str:
    """AgentOS's memory-graph edge id: the first 32 hex digits of sha256(mem_edge:src:tgt)."""
    return hashlib.sha256(f"mem_edge:{source_id}:{target_id}".encode()).hexdigest()[:32]


def query_key(query: str) -> str:
    return hashlib.sha256(query.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def strengthen(
    brain: Brain, traces: dict[str, tuple[int, Snap]], skip: set[str]
) -> tuple[list[StrengthenCandidate], dict[str, tuple[float, dict[str, Any]] | None]]:
    """One candidate per query for which an agent marked two or more live traces `used`
    (AgentOS's retrieval_feedback). Its pairs' CO_ACTIVATED edges grow by the learning rate,
    once per run while its traces have been used together more often than it counted: an
    edge remembers, per query, how many times both of its traces were used for it (the
    fewer of their `used` rows), so a second run changes nothing until both are used
    again."""
    db, bid = brain.db, brain.brain_id
    if "retrieval_feedback" not in db.tables:
        return [], {}
    with db.lock, db.reading("reading retrieval feedback"):
        rows = db.conn.execute(
            "SELECT id, trace_id, query FROM retrieval_feedback WHERE brain_id = ? "
            "AND signal = 'used' AND query IS NOT NULL ORDER BY id",
            (bid,),
        ).fetchall()
    return strengthen_from(rows, traces, skip, lambda eid: co_activation_edge(brain, eid))


def strengthen_from(
    rows: Iterable[tuple[Any, ...]],
    traces: dict[str, tuple[int, Snap]],
    skip: set[str],
    edge_of: Callable[[str], tuple[float, dict[str, Any]] | None],
) -> tuple[list[StrengthenCandidate], dict[str, tuple[float, dict[str, Any]] | None]]:
    """`strengthen` from the brain's `used` feedback rows (id, trace id, query), in id
    order, and its CO_ACTIVATED edges (`edge_of`: an edge id's (weight, metadata) or None),
    whichever engine they were read from."""
    uses: dict[str, dict[str, int]] = {}  # query -> trace id -> its 'used' rows
    for _row_id, trace_id, query in rows:
        if trace_id in traces and trace_id not in skip and isinstance(query, str):
            counts = uses.setdefault(query, {})
            counts[trace_id] = counts.get(trace_id, 0) + 1
    seen: dict[str, tuple[float, dict[str, Any]] | None] = {}
    weights: dict[str, float] = {}  # each edge's weight as the candidates so far leave it
    out: list[StrengthenCandidate] = []
    for query, used in uses.items():
        if len(used) < 2:
            continue
        key = query_key(query)
        pairs: list[StrengthenPair] = []
        ordered = sorted(used)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                eid = edge_id(a, b)
                if eid not in seen:
                    held = seen[eid] = edge_of(eid)
                    if held is not None:
                        weights[eid] = held[0]
                held = seen[eid]
                both = min(used[a], used[b])  # times both were used for the query
                if held is not None and _counted(held[1], key) >= both:
                    continue  # every co-use is in the edge already
                before = weights.get(eid)
                weights[eid] = min(1.0, (before or 0.0) + LEARNING_RATE)
                pairs.append(StrengthenPair(a, b, eid, before, weights[eid], both))
        if pairs:
            out.append(StrengthenCandidate(query, key, ordered, pairs))
    return out, {eid: seen[eid] for c in out for eid in (p.edge_id for p in c.pairs)}


def _counted(metadata: dict[str, Any], key: str) -> int:
    """How many co-uses for a query an edge has counted (0: none)."""
    counted = metadata.get(CO_USES)
    value = counted.get(key) if isinstance(counted, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def co_activation_edge(brain: Brain, eid: str) -> tuple[float, dict[str, Any]] | None:
    """A CO_ACTIVATED edge's (weight, metadata), or None when there is none."""
    with brain.db.lock, brain.db.reading("reading the memory graph"):
        row = brain.db.conn.execute(
            "SELECT weight, metadata FROM knowledge_edges WHERE brain_id = ? AND id = ? "
            "AND type = 'CO_ACTIVATED'",
            (brain.brain_id, eid),
        ).fetchone()
    return edge_value(row)


def memory_graph_node(trace_id: str, snap: Snap, now: int) -> dict[str, Any]:
    """AgentOS's memory-graph node of a trace, as strengthen writes it (both engines)."""
    properties = {
        "type": snap["type"],
        "scope": snap["scope"],
        "scopeId": snap["scope_id"],
        "strength": snap["strength"],
        "createdAt": snap["created_at"],
    }
    return {
        "id": trace_id,
        "type": "memory_graph",  # AgentOS's node of a trace: id and label are its id
        "label": trace_id,
        "properties": properties,
        "confidence": snap["strength"],
        "source": {},
        "created_at": now,
    }


def co_activation_rows(
    pair: StrengthenPair,
    key: str,
    current: tuple[float, dict[str, Any]] | None,
    now: int,
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(before, after) of a pair's CO_ACTIVATED edge grown by the learning rate, its uses
    counted under `key`; before is None when the edge is new (`after` is its whole row)."""
    counted = {key: pair.uses}
    if current is None:
        return None, {
            "id": pair.edge_id,
            "source_id": pair.source_id,
            "target_id": pair.target_id,
            "type": "CO_ACTIVATED",
            "weight": LEARNING_RATE,
            "bidirectional": 0,
            "metadata": {CO_USES: counted},
            "created_at": now,
        }
    weight, metadata = current
    held = metadata.get(CO_USES)
    held = dict(held) if isinstance(held, dict) else {}
    after = {
        "id": pair.edge_id,
        "weight": min(1.0, weight + LEARNING_RATE),
        "metadata": dict(metadata, **{CO_USES: {**held, **counted}}),
    }
    return {"id": pair.edge_id, "weight": weight, "metadata": metadata}, after


def edge_value(row: tuple[Any, ...] | None) -> tuple[float, dict[str, Any]] | None:
    """A CO_ACTIVATED edge's (weight, metadata) from its row (weight, metadata); None: none."""
    if row is None:
        return None
    weight = row[0] if isinstance(row[0], int | float) else 0.0
    return float(weight), node_properties(row[1])


# --- compact ------------------------------------------------------------------------------


def compact(
    traces: dict[str, tuple[int, Snap]], options: ConsolidationOptions, now: int, skip: set[str]
) -> list[CompactCandidate]:
    """Episodic traces older than the age and retrieved at least so often: made semantic."""
    cutoff = now - options.compact_age_ms
    out = []
    for trace_id, (_rowid, s) in traces.items():
        if trace_id in skip or s["type"] != "episodic":
            continue
        if s["created_at"] < cutoff and s["retrieval_count"] >= options.compact_min_retrievals:
            out.append(
                CompactCandidate(
                    trace_id=trace_id,
                    content=s["content"],
                    age_days=(now - s["created_at"]) / DAY_MS,
                    retrieval_count=s["retrieval_count"],
                    min_age_days=options.compact_age_days,
                    min_retrievals=options.compact_min_retrievals,
                )
            )
    return out


def pending_index_rows(brain: Brain) -> int:
    """Rows waiting for the full-text indexes (written by the re-index step)."""
    if "memgui_fts_pending" not in brain.db.tables:
        return 0
    with brain.db.lock, brain.db.reading("reading the index marks"):
        row = brain.db.conn.execute("SELECT count(*) FROM memgui_fts_pending").fetchone()
    return int(row[0]) if row else 0
