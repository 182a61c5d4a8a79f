"""Applying a reviewed consolidation plan: the accepted candidates in one transaction and one
journal batch (actor `consolidation`), so one revert undoes a whole run.

Before writing, every trace and edge the accepted candidates touch is compared with what
planning read: one edited, recalled, forgotten, merged or purged since makes the plan
outdated (`ConsolidationOutdated`) and nothing is written, as an import's plan is refused
once the brain holds what it would add. Prunes and merges are soft deletes (`forget`); no
step deletes a row. Each applied run is logged in AgentOS's `consolidation_log`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core import traces
from memgui.core.consolidate_plan import (
    INSIGHT_STRENGTH,
    REINDEX,
    Candidate,
    ConsolidationPlan,
    DeriveCandidate,
    MergeCluster,
    StrengthenCandidate,
)
from memgui.core.consolidate_steps import (
    co_activation_edge,
    co_activation_rows,
    memory_graph_node,
)
from memgui.core.errors import ConsolidationOutdated, InvalidArgument
from memgui.core.model import Changes
from memgui.core.progress import Cancelled, Job, Progress
from memgui.core.search import fulltext
from memgui.core.storage import journal_rows, reads, store

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.storage.db import WriteBatch


@dataclass
class ConsolidationResult:
    """What a run did. `seed_counts()` is AgentOS's `memory_reflect` answer."""

    pruned: int = 0
    merged: int = 0  # traces merged into a survivor (soft-deleted)
    strengthened: int = 0  # queries whose co-activation edges grew
    derived: int = 0  # insight traces added
    compacted: int = 0
    reindexed: int = 0  # rows the full-text indexes took in
    duration_ms: int = 0
    batch_id: str | None = None  # the journal batch: `brain.revert(batch_id)` undoes the run
    busy: str | None = None  # another consolidation held the brain: nothing was done
    notes: list[str] = field(default_factory=list)
    derived_ids: list[str] = field(default_factory=list)
    changes: Changes | None = None  # what the run changed (None: nothing)

    def seed_counts(self) -> dict[str, int]:
        """As AgentOS reports a run: its `derived` counts insights and strengthened queries."""
        return {
            "pruned": self.pruned,
            "merged": self.merged,
            "derived": self.derived + self.strengthened,
            "compacted": self.compacted,
            "durationMs": self.duration_ms,
            "personalityDecayed": 0,  # memgui keeps no personality mutations
        }

    def to_json(self) -> dict[str, Any]:
        return {
            **self.seed_counts(),
            "insights": self.derived,
            "strengthened": self.strengthened,
            "reindexed": self.reindexed,
            "batch_id": self.batch_id,
            "busy": self.busy,
            "notes": list(self.notes),
        }


def _mergeable(cluster: MergeCluster) -> bool:
    ids = [m.trace_id for m in cluster.merging]
    return len(ids) >= 2 and cluster.survivor_id in ids


def write_plan(
    brain: Brain,
    plan: ConsolidationPlan,
    keys: set[str] | None,
    cancel_requested: Callable[[], bool],
    actor: str,
    started: float | None = None,
) -> Job[ConsolidationResult]:
    """The body of `consolidate.apply` (see there); `started`: when the run began, for
    the duration it logs (`time.perf_counter()`; default: now)."""
    start = time.perf_counter() if started is None else started
    if plan.applied_batch is not None:
        raise InvalidArgument(
            "plan", "was applied already; plan the consolidation again", plan.applied_batch
        )
    result = ConsolidationResult(notes=list(plan.notes))
    if plan.busy is not None:
        result.busy = plan.busy
        return result

    def chosen(c: Candidate) -> bool:
        return c.accepted if keys is None else c.key in keys

    prunes = [c for c in plan.prune if chosen(c)]
    merges = [c for c in plan.merge if chosen(c) and _mergeable(c)]
    strengthens = [c for c in plan.strengthen if chosen(c)]
    derives = [c for c in plan.derive if chosen(c)]
    compacts = [c for c in plan.compact if chosen(c)]
    total = len(prunes) + len(merges) + len(strengthens) + len(derives) + len(compacts)
    yield Progress(0, total, f"writing {total} changes")
    done = 0
    write = brain.write("consolidate", kind="consolidation", actor=actor)
    with write as batch:
        _refuse_outdated(brain, plan, prunes, merges, strengthens, derives, compacts)
        for p in prunes:
            traces.set_deleted(brain, p.trace_id, True, None, actor)
            result.pruned += 1
            done = yield from _step(done, total, cancel_requested)
        for m in merges:
            ids = [m.survivor_id, *m.losers]
            traces.merge(brain, ids, m.content, actor, keep=m.survivor_id, verified=True)
            result.merged += len(m.losers)
            done = yield from _step(done, total, cancel_requested)
        for s in strengthens:
            _strengthen(brain, batch, s)
            result.strengthened += 1
            done = yield from _step(done, total, cancel_requested)
        for n, d in enumerate(derives):
            result.derived_ids.append(_derive(brain, d, actor, n))
            result.derived += 1
            done = yield from _step(done, total, cancel_requested)
        for c in compacts:
            traces.update(brain, c.trace_id, {"type": "semantic"}, None, actor)
            result.compacted += 1
            done = yield from _step(done, total, cancel_requested)
        if REINDEX in plan.options.steps:
            result.reindexed = fulltext.flush_in_transaction(brain.db)
        result.duration_ms = round((time.perf_counter() - start) * 1000)
        _log(brain, result)
    # No yield from here on: the run is in the brain (a cancel now would misreport it).
    changes = write.changes
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    plan.applied_batch = result.batch_id or ""
    texts = [m.survivor_id for m in merges] + result.derived_ids
    if texts:
        brain._embed_now(texts)  # new text, embedded after the commit as an edit's is
    return result


def _step(done: int, total: int, cancel_requested: Callable[[], bool]) -> Job[int]:
    done += 1
    if cancel_requested():
        raise Cancelled("the consolidation was cancelled; nothing was written")
    if done % 200 == 0 or done == total:
        yield Progress(done, total, f"wrote {done} of {total} changes")
    return done


# --- the plan against the brain now --------------------------------------------------------


def _refuse_outdated(
    brain: Brain,
    plan: ConsolidationPlan,
    prunes: list[Any],
    merges: list[MergeCluster],
    strengthens: list[StrengthenCandidate],
    derives: list[DeriveCandidate],
    compacts: list[Any],
) -> None:
    """Raise `ConsolidationOutdated` when a trace or edge the accepted candidates touch is
    not as planning read it. Call inside the write transaction, before it writes."""
    ids = {p.trace_id for p in prunes} | {c.trace_id for c in compacts}
    ids |= {m.trace_id for c in merges for m in c.merging}
    ids |= {i for c in strengthens for i in c.trace_ids}
    ids |= {i for c in derives for i in c.member_ids}
    now = {}
    for row in reads.rows_of_ids(brain.db, brain.brain_id, sorted(ids)):
        snap = store.row_to_snapshot(row)
        now[snap["id"]] = (snap["version"], snap["last_accessed"], snap["deleted"])
    changed: list[tuple[str, str]] = []
    for trace_id in sorted(ids):
        seen, current = plan.seen.get(trace_id), now.get(trace_id)
        if current is None:
            changed.append((trace_id, "it no longer exists"))
        elif seen is not None and current != seen:
            changed.append((trace_id, how_changed(seen, current)))
    for eid in sorted({p.edge_id for c in strengthens for p in c.pairs}):
        if co_activation_edge(brain, eid) != plan.seen_edges.get(eid):
            changed.append((f"co-activation edge {eid}", "it changed"))
    if changed:
        raise ConsolidationOutdated(len(changed), *changed[0])


def how_changed(seen: tuple[int, int | None, bool], now: tuple[int, int | None, bool]) -> str:
    """What befell a trace between planning (`seen`) and now, in a few words."""
    if seen[2] != now[2]:
        return "it was forgotten" if now[2] else "it was restored"
    if seen[0] != now[0]:
        return f"it was edited (version {seen[0]} → {now[0]})"
    return "it was recalled"


# --- writing the steps ---------------------------------------------------------------------


def _strengthen(brain: Brain, batch: WriteBatch, candidate: StrengthenCandidate) -> None:
    """Each pair's CO_ACTIVATED edge grows by the learning rate (made at it when missing),
    with the memory-graph nodes of its traces; journaled, so a revert takes it back."""
    db, bid, now = brain.db, brain.brain_id, brain.now()
    for trace_id in candidate.trace_ids:
        if db.conn.execute(
            "SELECT 1 FROM knowledge_nodes WHERE brain_id = ? AND id = ?", (bid, trace_id)
        ).fetchone():
            continue
        snap = store.row_to_snapshot(store.fetch_row(db, bid, trace_id))  # type: ignore[arg-type]
        journal_rows.insert_row(db, batch, bid, "node", memory_graph_node(trace_id, snap, now))
    for pair in candidate.pairs:
        current = co_activation_edge(brain, pair.edge_id)
        before, after = co_activation_rows(pair, candidate.query_key, current, now)
        if before is None:
            journal_rows.insert_row(db, batch, bid, "edge", after)
        else:
            journal_rows.update_row(db, batch, bid, "edge", before, after)


def _derive(brain: Brain, candidate: DeriveCandidate, actor: str, n: int) -> str:
    """The insight as a semantic trace (AgentOS: `insight_<ms>_<n>`, strength 0.7, tags
    derived and insight), filed where its cluster is when all of it is in one scope."""
    members = live_traces_of(brain, candidate.member_ids)
    places = {(s["scope"], s["scope_id"]) for s in members}
    scope, scope_id = places.pop() if len(places) == 1 else ("user", "")
    trace = traces.add(
        brain,
        candidate.insight,
        type="semantic",
        scope=scope,
        scope_id=scope_id,
        tags=["derived", "insight"],
        strength=INSIGHT_STRENGTH,
        id=f"insight_{brain.now()}_{n}",
        metadata={
            "sourceCluster": candidate.centroid_id,
            "derivedFrom": sorted(candidate.member_ids),
            "derivedBy": candidate.model,
        },
        actor=actor,
    )
    return trace.id


def live_traces_of(brain: Brain, ids: list[str]) -> list[dict[str, Any]]:
    snaps = (store.row_to_snapshot(r) for r in reads.rows_of_ids(brain.db, brain.brain_id, ids))
    return [s for s in snaps if not s["deleted"]]


def _log(brain: Brain, result: ConsolidationResult) -> None:
    """The run's row in AgentOS's `consolidation_log` (its `derived` as AgentOS counts it)."""
    if "consolidation_log" not in brain.db.tables:
        return
    counts = result.seed_counts()
    brain.db.conn.execute(
        "INSERT INTO consolidation_log (brain_id, ran_at, pruned, merged, derived, compacted, "
        "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            brain.brain_id,
            brain.now(),
            counts["pruned"],
            counts["merged"],
            counts["derived"],
            counts["compacted"],
            result.duration_ms,
        ),
    )
