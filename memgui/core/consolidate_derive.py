"""The derive step: clusters of linked traces, and the insight a chat model draws from each.

Clusters are the connected components (union-find, as AgentOS's `detectClusters`) of the
brain's associations between live traces: its memory-graph edges (AgentOS's
`knowledge_edges` between traces, co-activation among them) and memgui's links. The largest
`max_derived` components of at least `min_cluster_size` traces are asked for, each with
AgentOS's prompt. A cluster that already has its insight (a live trace derived from exactly
these traces) is not asked again, so a second run derives nothing new. The chat model is
called while planning, never inside a write transaction; when it cannot be reached the step
is skipped and the plan says why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from memgui.core.consolidate_plan import DERIVE_PROMPT, ConsolidationOptions, DeriveCandidate
from memgui.core.progress import Cancelled, Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain

Snap = dict[str, Any]


def clusters(
    found: list[tuple[str, str, float]],
    traces: dict[str, tuple[int, Snap]],
    skip: set[str],
    min_size: int,
) -> list[tuple[str, list[str]]]:
    """(centroid, members) of each component of at least `min_size` live traces, largest
    first; the centroid has the most edge weight inside its component (AgentOS). `found`:
    the brain's associations (source, target, weight), as `file_edges` reads them."""
    edges = [
        (a, b, w)
        for a, b, w in found
        if a != b and a in traces and b in traces and a not in skip and b not in skip
    ]
    parent: dict[str, str] = {}

    def find(a: str) -> str:
        while parent.setdefault(a, a) != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b, _w in edges:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, list[str]] = defaultdict(list)
    for node in parent:
        members[find(node)].append(node)
    weight: dict[str, float] = defaultdict(float)
    for a, b, w in edges:
        weight[a] += w
        weight[b] += w
    order = {trace_id: i for i, trace_id in enumerate(traces)}
    out = []
    for group in members.values():
        if len(group) < min_size:
            continue
        group.sort(key=order.__getitem__)
        centroid = max(group, key=lambda t: (weight[t], -order[t]))
        out.append((centroid, group))
    out.sort(key=lambda c: (-len(c[1]), order[c[1][0]]))
    return out


def file_edges(brain: Brain) -> list[tuple[str, str, float]]:
    """Every memory-graph edge and link of a file brain: (source, target, weight)."""
    db, bid = brain.db, brain.brain_id
    found: list[tuple[str, str, float]] = []
    with db.lock, db.reading("reading the memory graph"):
        if "knowledge_edges" in db.tables:
            for source, target, weight in db.conn.execute(
                "SELECT source_id, target_id, weight FROM knowledge_edges WHERE brain_id = ?",
                (bid,),
            ):
                found.append((source, target, edge_weight(weight)))
        if "memory_links" in db.tables:
            for a, b in db.conn.execute(
                "SELECT from_id, to_id FROM memory_links WHERE brain_id = ?", (bid,)
            ):
                found.append((a, b, 1.0))
    return found


def edge_weight(weight: object) -> float:
    """An edge's weight as a number (1.0 when another program stored something else)."""
    return float(weight) if isinstance(weight, int | float) else 1.0


def derived_already(traces: dict[str, tuple[int, Snap]]) -> set[tuple[str, ...]]:
    """The member sets live insight traces were derived from."""
    out = set()
    for _rowid, s in traces.values():
        source = s["metadata"].get("derivedFrom") if isinstance(s["metadata"], dict) else None
        if isinstance(source, list) and all(isinstance(x, str) for x in source):
            out.add(tuple(sorted(source)))
    return out


def derive(
    brain: Brain,
    traces: dict[str, tuple[int, Snap]],
    options: ConsolidationOptions,
    skip: set[str],
    notes: list[str],
    cancel_requested: Callable[[], bool],
) -> Iterator[Progress | list[DeriveCandidate]]:
    """Ask the chat model for one insight per cluster; yields progress, then the candidates."""
    if options.max_derived == 0:
        yield []
        return
    found = wanted(file_edges(brain), traces, options, skip, notes)
    yield from ask(found, traces, options, notes, cancel_requested)


def wanted(
    edges: list[tuple[str, str, float]],
    traces: dict[str, tuple[int, Snap]],
    options: ConsolidationOptions,
    skip: set[str],
    notes: list[str],
) -> list[tuple[str, list[str]]]:
    """The clusters to ask the chat model about: the largest `max_derived` without an
    insight yet (none: the notes say why)."""
    if options.max_derived == 0:
        return []
    done = derived_already(traces)
    found = [
        (centroid, ids)
        for centroid, ids in clusters(edges, traces, skip, options.min_cluster_size)
        if tuple(sorted(ids)) not in done
    ][: options.max_derived]
    if not found:
        notes.append(
            f"derive: no cluster of {options.min_cluster_size} or more linked memories "
            "without an insight yet"
        )
    return found


def ask(
    found: list[tuple[str, list[str]]],
    traces: dict[str, tuple[int, Snap]],
    options: ConsolidationOptions,
    notes: list[str],
    cancel_requested: Callable[[], bool],
) -> Iterator[Progress | list[DeriveCandidate]]:
    """One insight per cluster of `found` from the chat model (never inside a transaction);
    yields progress, then the candidates."""
    if not found:
        yield []
        return
    llm = options.llm
    reason = "no chat model was given" if llm is None else llm.unavailable_reason()
    if reason is not None or llm is None:
        notes.append(f"derive skipped: {len(found)} cluster(s) found, but {reason}")
        yield []
        return
    out: list[DeriveCandidate] = []
    from memgui.core.llm import LLMUnavailable

    for n, (centroid, ids) in enumerate(found, start=1):
        if cancel_requested():
            raise Cancelled("the consolidation plan was cancelled")
        yield Progress(n - 1, len(found), f"asking {llm.model} about cluster {n}")
        contents = [traces[i][1]["content"] for i in ids]
        try:
            insight = llm.chat(None, DERIVE_PROMPT + "\n".join(contents)).strip()
        except LLMUnavailable as error:  # that cluster is skipped, as in AgentOS
            notes.append(f"derive: cluster of {centroid} skipped: {error}")
            continue
        if insight:
            out.append(DeriveCandidate(n, centroid, ids, contents, insight, llm.model))
    yield out
