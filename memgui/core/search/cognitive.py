"""The `cognitive` search mode: AgentOS's composite retrieval score (upstream-notes §B.3,
`RetrievalPriorityScorer.scoreAndRankTraces`), with its parts kept for each result.

    score = 0.35·similarity + 0.25·strength + 0.10·recency + 0.15·emotional congruence
          + 0.10·graph activation + 0.05·importance, clamped to 0–1, best first

- **similarity**: the cosine of the query's vector and the trace's (the brain's stored
  vectors, when it has them and Ollama embeds the query); else, as memgui's fallback, the
  trace's bm25 relative to the best keyword match (the result says which).
- **strength**: the current Ebbinghaus strength S(t) (decay.py).
- **recency**: `exp(−Δt / 1 day)`, Δt since the last access (else creation): AgentOS's
  boost `1 + 0.2·e^…` normalised to 0–1.
- **emotional congruence**: `max(0, mood · valence)`, the trace's `emotions.valence` and
  the mood given (−1…1); 0 without a mood (AgentOS's `neutralMood`).
- **graph activation**: AgentOS's spreading activation (depth 3, ×0.5 a hop, threshold
  0.1, paths summed up to 1) from the knowledge-graph nodes the query names, over the
  graph's edges and memgui's links; a trace gets its own node's activation or that of an
  entity it names (`metadata.entities`), 1 for a named one.
- **importance**: `0.5 + 0.5·confidence` (`metadata.confidence`, 1 when absent).

Candidates are twice the limit (AgentOS over-fetches topK·2); only returned traces are noted
as recalled, as in every mode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memgui.core import decay
from memgui.core.errors import EmbeddingUnavailable, InvalidArgument
from memgui.core.model import (
    SearchResult,
    TraceFilter,
    check_filter,
    check_limit,
    check_text,
)
from memgui.core.search import hybrid, searching, textindex, vectors
from memgui.core.search.filters import filter_sql
from memgui.core.search.keyword import keyword_ranking

if TYPE_CHECKING:
    from memgui.core.brain import Brain

MODE = "cognitive"
WEIGHTS = {
    "similarity": 0.35,
    "strength": 0.25,
    "recency": 0.10,
    "emotionalCongruence": 0.15,
    "graphActivation": 0.10,
    "importance": 0.05,
}
RECENCY_HALF_LIFE_MS = 86_400_000
MAX_DEPTH, DECAY_PER_HOP, ACTIVATION_THRESHOLD = 3, 0.5, 0.1
MAX_VISITED = 2000  # graph nodes a search spreads to at most
MAX_QUERY_WORDS = 32
LABELS = {
    "similarity": "similarity",
    "strength": "strength",
    "recency": "recency",
    "emotionalCongruence": "mood",
    "graphActivation": "graph",
    "importance": "importance",
}

Scored = list[tuple[float, int, dict[str, Any]]]


def check_mood(mood: object) -> float | None:
    if mood is None:
        return None
    if isinstance(mood, bool) or not isinstance(mood, int | float) or not math.isfinite(mood):
        raise InvalidArgument("mood", f"must be a number from -1 to 1 (got {mood!r})", mood)
    if not -1 <= mood <= 1:
        raise InvalidArgument("mood", f"must be between -1 and 1 (got {mood!r})", mood)
    return float(mood)


def in_mode(
    brain: Brain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mode: str,
    expand_links: bool,
    record_recall: bool,
    mood: float | None,
) -> SearchResult:
    """`Brain.search`: this mode, or another mode's search (which takes no mood: a mood
    given there is a mistake, not something to ignore)."""
    if mode == MODE:
        return search(brain, query, flt, limit, mood, expand_links, record_recall)
    if mood is not None:
        raise InvalidArgument("mood", f"is for the cognitive mode only (got mode {mode!r})", mood)
    return searching.search(brain, query, flt, limit, mode, expand_links, record_recall)


def why(parts: dict[str, float], score: float) -> str:
    """The result's score spelled out: `0.82 = similarity 0.91×0.35 + …`."""
    terms = " + ".join(f"{LABELS[k]} {parts[k]:.2f}×{WEIGHTS[k]:g}" for k in WEIGHTS)
    return f"{score:.2f} = {terms}"


def search(
    brain: Brain,
    query: str,
    flt: TraceFilter,
    limit: int,
    mood: float | None,
    expand_links: bool,
    record_recall: bool,
) -> SearchResult:
    """The best `limit` traces by the composite score, each hit with its `parts`."""
    if not isinstance(query, str):
        raise InvalidArgument("query", f"must be a string (got {query!r})", query)
    check_text("query", query)
    check_limit(limit)
    check_filter(flt)
    mood = check_mood(mood)
    if not textindex.words(query):
        return SearchResult(hits=(), search_mode=MODE)
    pool = 2 * limit
    similarity = _by_vector(brain, query, flt, pool)
    source = "vector"
    if similarity is None:
        similarity, source = _by_keyword(brain, query, flt, pool), "keyword"
    rowids = {trace_id: rowid for trace_id, (rowid, _sim) in similarity.items()}
    snaps = searching.snapshots_by_rowid(brain, [(r, t) for t, r in rowids.items()], flt)
    activation = _activation(brain, query)
    now = brain.now()
    ranked: list[tuple[float, int, dict[str, Any], dict[str, float]]] = []
    for rowid, snap in snaps.items():
        parts = score_parts(snap, similarity[snap["id"]][1], activation, mood, now)
        total = sum(WEIGHTS[k] * parts[k] for k in WEIGHTS)
        ranked.append((max(0.0, min(1.0, total)), rowid, snap, parts))
    ranked.sort(key=lambda r: (-r[0], r[2]["id"]))
    ranked = ranked[:limit]
    result = searching._finish(
        brain,
        query,
        [(s, r, snap) for s, r, snap, _ in ranked],
        MODE,
        expand_links,
        record_recall,
        flt,
    )
    parts_of = {
        snap["id"]: dict(parts, similaritySource=source, why=why(parts, score))
        for score, _, snap, parts in ranked
    }
    hits = tuple(replace(hit, parts=parts_of[hit.trace.id]) for hit in result.hits)
    return SearchResult(hits=hits, search_mode=MODE)


def score_parts(
    snap: dict[str, Any],
    similarity: float,
    activation: dict[str, float],
    mood: float | None,
    now: int,
) -> dict[str, float]:
    since = snap["last_accessed"] if snap["last_accessed"] is not None else snap["created_at"]
    emotions = snap["emotions"] if isinstance(snap["emotions"], dict) else {}
    valence = _number(emotions.get("valence"), 0.0)
    metadata = snap["metadata"] if isinstance(snap["metadata"], dict) else {}
    confidence = min(1.0, max(0.0, _number(metadata.get("confidence"), 1.0)))
    graph = activation.get(snap["id"], 0.0)
    entities = metadata.get("entities")
    if isinstance(entities, list):
        for name in entities:
            if isinstance(name, str):
                graph = max(graph, activation.get(_label_key(name), 0.0))
    return {
        "similarity": max(0.0, min(1.0, similarity)),
        "strength": decay.current_strength(
            snap["strength"], snap["created_at"], since, metadata, snap["category"], now
        ),
        "recency": math.exp(-max(0, now - since) / RECENCY_HALF_LIFE_MS),
        "emotionalCongruence": 0.0 if mood is None else max(0.0, mood * valence),
        "graphActivation": graph,
        "importance": 0.5 + 0.5 * confidence,
    }


def _number(value: object, default: float) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else default  # type: ignore[arg-type]


# --- the similarity leg -----------------------------------------------------------------------


def _by_vector(
    brain: Brain, query: str, flt: TraceFilter, pool: int
) -> dict[str, tuple[int, float]] | None:
    """trace id -> (rowid, cosine) of the nearest traces, or None when meaning cannot be
    searched (no vectors, no embedder, Ollama down, another model's vectors)."""
    semantic = getattr(brain, "semantic", None)
    if semantic is None:
        return None
    db, bid = brain.db, brain.brain_id
    with db.lock:
        if not hybrid.has_embeddings(db.conn, bid):
            return None
        pinned = vectors.pinned_model(db.conn, bid)
    try:
        vectors.check_pinned(bid, pinned, semantic.embedder.model, None)
        vector = semantic.embedder.embed([query])[0]
        vectors.check_pinned(bid, pinned, semantic.embedder.model, len(vector))
    except (EmbeddingUnavailable, vectors.EmbeddingModelMismatch):
        return None
    where: str | None = None
    params: list[Any] = []
    if flt != TraceFilter():
        where, params = filter_sql(db, bid, flt)
    with db.lock:
        hits = hybrid.semantic_ranking(
            db.conn, bid, vector, pool, where, params, trash=flt.deleted or flt.include_deleted
        )
        rowids = _rowids(brain, [trace_id for trace_id, _ in hits])
    return {t: (rowids[t], sim) for t, sim in hits if t in rowids}


def _rowids(brain: Brain, ids: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for trace_id, rowid in brain.db.conn.execute(
            f"SELECT id, rowid FROM memory_traces WHERE brain_id = ? AND id IN ({marks})",
            (brain.brain_id, *chunk),
        ):
            out[str(trace_id)] = int(rowid)
    return out


def _by_keyword(
    brain: Brain, query: str, flt: TraceFilter, pool: int
) -> dict[str, tuple[int, float]]:
    """trace id -> (rowid, bm25 relative to the best match): the similarity of a brain
    without vectors."""
    hits = keyword_ranking(brain, query, flt, pool)
    best = max((-h.bm25 for h in hits), default=0.0)
    return {h.id: (h.rowid, (-h.bm25 / best) if best > 0 else 0.0) for h in hits}


# --- the graph leg ----------------------------------------------------------------------------


def _label_key(label: str) -> str:
    return "label:" + " ".join(label.casefold().split())


def query_phrases(query: str) -> list[str]:
    """The query's words and runs of two and three words, case-folded (what a node's label
    must equal to be named by the query)."""
    words = re.findall(r"[\w'-]+", query.casefold())[:MAX_QUERY_WORDS]
    out = {w for w in words if len(w) > 1}
    for size in (2, 3):
        out |= {" ".join(words[i : i + size]) for i in range(len(words) - size + 1)}
    return sorted(out)


def _activation(brain: Brain, query: str) -> dict[str, float]:
    """Node id (or `label:<name>`) -> activation spread from the nodes the query names."""
    db, bid = brain.db, brain.brain_id
    phrases = query_phrases(query)
    if not phrases or "knowledge_nodes" not in db.tables:
        return {}
    marks = ",".join("?" * len(phrases))
    with db.lock:
        seeds = db.conn.execute(
            f"SELECT id, label FROM knowledge_nodes WHERE brain_id = ? AND type != 'memory_graph' "
            f"AND lower(label) IN ({marks})",
            (bid, *phrases),
        ).fetchall()
        return spread(
            phrases,
            [str(node) for node, _ in seeds],
            lambda wave: {node: _neighbours(brain, node) for node in wave},
            lambda nodes: _labels(brain, nodes),
        )


def spread(
    phrases: list[str],
    seeds: list[str],
    neighbours_of: Callable[[list[str]], dict[str, list[tuple[str, float]]]],
    labels_of: Callable[[list[str]], dict[str, str]],
) -> dict[str, float]:
    """AgentOS's spreading activation from the `seeds` (the nodes the query's `phrases`
    name), a wave of nodes at a time: each engine gives a wave's neighbours (knowledge
    edges and memory links, with their weights) and the nodes' labels."""
    # A trace naming a query word as an entity is a seed's self-match (AgentOS): 1.
    out: dict[str, float] = {f"label:{p}": 1.0 for p in phrases}
    level: dict[str, float] = dict.fromkeys(seeds, 1.0)
    wave = list(level)
    for _depth in range(MAX_DEPTH):
        following: list[str] = []
        found = neighbours_of(wave)
        for node in wave:
            for other, weight in found.get(node, []):
                push = level[node] * max(0.0, min(1.0, weight)) * DECAY_PER_HOP
                if push < ACTIVATION_THRESHOLD:
                    continue
                if other in level:
                    level[other] = min(1.0, level[other] + push)
                elif len(level) < MAX_VISITED:
                    level[other] = min(1.0, push)
                    following.append(other)
        wave = following
        if not wave:
            break
    labels = labels_of(list(level))
    for node, value in level.items():
        out[node] = max(out.get(node, 0.0), value)
        if node in labels:
            key = _label_key(labels[node])
            out[key] = max(out.get(key, 0.0), value)
    return out


def _neighbours(brain: Brain, node: str) -> list[tuple[str, float]]:
    conn, bid = brain.db.conn, brain.brain_id
    found = [
        (other, float(weight) if isinstance(weight, int | float) else 1.0)
        for other, weight in conn.execute(
            "SELECT CASE WHEN source_id = ?2 THEN target_id ELSE source_id END, weight "
            "FROM knowledge_edges WHERE brain_id = ?1 AND (source_id = ?2 OR target_id = ?2)",
            (bid, node),
        )
    ]
    if "memory_links" in brain.db.tables:
        found += [
            (other, 1.0)
            for (other,) in conn.execute(
                "SELECT CASE WHEN from_id = ?2 THEN to_id ELSE from_id END FROM memory_links "
                "WHERE brain_id = ?1 AND (from_id = ?2 OR to_id = ?2)",
                (bid, node),
            )
        ]
    return found


def _labels(brain: Brain, nodes: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(nodes), 500):
        chunk = nodes[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for node, label in brain.db.conn.execute(
            f"SELECT id, label FROM knowledge_nodes WHERE brain_id = ? AND id IN ({marks}) "
            "AND type != 'memory_graph'",
            (brain.brain_id, *chunk),
        ):
            out[str(node)] = str(label)
    return out
