"""Consolidation of a shared brain (`memgui reflect`), with the rules of a file
(`core/consolidate.py`): the same candidates found the same way (`consolidate_steps`,
`consolidate_derive`), the same writes (`shared_consolidate_steps`), one journal batch a
revert undoes.

Planning reads the brain in one snapshot holding the brain id's advisory lock; the run is one
transaction holding it again, the traces it touches locked as it reads them: a trace or
co-activation edge changed since the plan makes it `ConsolidationOutdated`, and a second
consolidation (or any long operation, AgentOS's migrations included) is refused meanwhile
with `busy` naming the holder, zero counts and nothing written, as on a file. The chat model
that derives insights is asked after the planning transaction, never inside one. Merging
by meaning compares the vectors the planning snapshot reads (`shared_vectors.rows_of`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from memgui.core import (
    consolidate_derive,
    consolidate_steps,
    shared_consolidate_steps,
    shared_vectors,
    traces,
)
from memgui.core.consolidate_apply import ConsolidationResult, how_changed
from memgui.core.consolidate_plan import (
    COMPACT,
    DERIVE,
    MERGE,
    PRUNE,
    STRENGTHEN,
    Candidate,
    CompactCandidate,
    ConsolidationOptions,
    ConsolidationPlan,
    DeriveCandidate,
    MergeCluster,
    PruneCandidate,
    StrengthenCandidate,
)
from memgui.core.errors import BrainLocked, ConsolidationOutdated, InvalidArgument
from memgui.core.progress import Cancelled, Job, Progress, run_to_end
from memgui.core.shared_upkeep import merge_in
from memgui.core.storage import postgres, postgres_locks, postgres_scopes, postgres_vectors, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.transaction import WriteBatch

ACTOR = "consolidation"
LOCK_PLAN, LOCK_RUN = "consolidation plan", "consolidation"  # what a refused one is told
Snap = dict[str, Any]
Cluster = tuple[str, list[str]]


@dataclass
class _Chosen:
    """The candidates a run writes, step by step."""

    prunes: list[PruneCandidate]
    merges: list[MergeCluster]
    strengthens: list[StrengthenCandidate]
    derives: list[DeriveCandidate]
    compacts: list[CompactCandidate]

    @property
    def total(self) -> int:
        steps = (self.prunes, self.merges, self.strengthens, self.derives, self.compacts)
        return sum(len(step) for step in steps)

    def trace_ids(self) -> set[str]:
        ids = {c.trace_id for c in self.prunes} | {c.trace_id for c in self.compacts}
        ids |= {m.trace_id for c in self.merges for m in c.merging}
        ids |= {i for c in self.strengthens for i in c.trace_ids}
        return ids | {i for c in self.derives for i in c.member_ids}


def _options(options: ConsolidationOptions | None) -> ConsolidationOptions:
    if options is not None and not isinstance(options, ConsolidationOptions):
        raise InvalidArgument(
            "options", f"must be ConsolidationOptions (got {options!r:.80})", options
        )
    return (options or ConsolidationOptions()).validated()


def _plan(
    brain: SharedBrain, options: ConsolidationOptions, lock: bool
) -> tuple[ConsolidationPlan, dict[str, tuple[int, Snap]], list[Cluster]]:
    """Every step's candidates but the insights, and the clusters to ask the chat model
    about (`consolidate_derive.ask`, after the transaction)."""
    conn, bid, now = brain.conn, brain.brain_id, brain.now()
    plan = ConsolidationPlan(bid, options, now)
    rows = postgres_scopes.live_rows(conn, bid, lock)
    live = {str(r[1]): (0, store.row_to_snapshot(r)) for r in rows}
    steps = options.steps
    gone: set[str] = set()
    wanted: list[Cluster] = []
    if PRUNE in steps:
        plan.prune = consolidate_steps.prune(live, options, now)
        gone |= {c.trace_id for c in plan.prune}
    if MERGE in steps:
        vectors = partial(_vectors, brain, list(live))
        for event in consolidate_steps.merge(vectors, live, options, gone, lambda: False):
            if isinstance(event, list):
                plan.merge = event
        gone |= {i for c in plan.merge for i in c.losers}
    if STRENGTHEN in steps:
        plan.strengthen, plan.seen_edges = shared_consolidate_steps.strengthen(
            conn, bid, live, gone
        )
    if DERIVE in steps and options.max_derived > 0:
        edges = shared_consolidate_steps.associations(conn, bid)
        wanted = consolidate_derive.wanted(edges, live, options, gone, plan.notes)
    if COMPACT in steps:
        plan.compact = consolidate_steps.compact(live, options, now, gone)
    return plan, live, wanted


def _vectors(brain: SharedBrain, ids: list[str]) -> consolidate_steps.Vectors | None:
    """The stored vectors of `ids` as the caller's transaction sees them; None when the
    brain has none (no dimension pinned)."""
    dims = postgres_vectors.pinned_model(brain.conn, brain.brain_id)[1]
    if not dims:
        return None
    key = (brain.address.conninfo, brain.brain_id)
    return shared_vectors.rows_of(brain.conn, key, dims, ids)


def _seen(plan: ConsolidationPlan, live: dict[str, tuple[int, Snap]]) -> None:
    """What planning read of each trace a candidate touches (`ConsolidationOutdated`)."""
    touched = _Chosen(plan.prune, plan.merge, plan.strengthen, plan.derive, plan.compact)
    for trace_id in touched.trace_ids():
        s = live[trace_id][1]
        plan.seen[trace_id] = (s["version"], s["last_accessed"], s["deleted"])


def plan_consolidation(
    brain: SharedBrain, options: ConsolidationOptions | None = None
) -> ConsolidationPlan:
    """Every step's candidates, read in one snapshot of the brain; writes nothing."""
    return run_to_end(plan_job(brain, options))


def plan_job(
    brain: SharedBrain,
    options: ConsolidationOptions | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[ConsolidationPlan]:
    """`consolidate.plan_consolidation` on a shared brain (a job): the plan, read in one
    snapshot while holding the brain id's advisory lock, so a plan is not made while another
    long operation (a consolidation, an import, AgentOS's) is changing the brain: then the
    plan is empty and `busy` names the holder. The chat model is asked after that
    transaction, so no transaction waits on it."""
    options = _options(options)
    stop = cancel_requested or (lambda: False)
    start = time.perf_counter()
    yield Progress(0, None, "reading the brain")
    try:
        with brain.conn.transaction():
            brain.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            postgres_locks.hold(brain.conn, brain.brain_id, LOCK_PLAN, str(brain.address))
            plan, live, wanted = _plan(brain, options, lock=False)
    except BrainLocked as locked:
        plan = ConsolidationPlan(brain.brain_id, options, brain.now())
        plan.busy = f"another long operation holds this brain ({locked.holder})"
        return plan
    if stop():
        raise Cancelled("the consolidation plan was cancelled")
    if wanted:
        yield Progress(0, None, "asking the chat model about the clusters found")
        for item in consolidate_derive.ask(wanted, live, options, plan.notes, stop):
            if isinstance(item, Progress):
                yield item
            else:
                plan.derive = item
    _seen(plan, live)
    plan.duration_ms = round((time.perf_counter() - start) * 1000)
    total = sum(plan.counts.values())
    yield Progress(total, total, f"planned: {total} candidates")
    return plan


def apply_job(
    brain: SharedBrain,
    plan: ConsolidationPlan,
    keys: set[str] | None,
    cancel_requested: Callable[[], bool],
    actor: str = ACTOR,
    started: float | None = None,
) -> Job[ConsolidationResult]:
    """`consolidate.apply` on a shared brain (a job): the accepted candidates in one
    transaction and one journal batch, holding the brain id's advisory lock for the run (as
    AgentOS's reflect does); a trace or co-activation edge the plan names that changed since
    is `ConsolidationOutdated`, a cancel `Cancelled`: nothing is written either way. While
    another long operation holds the brain, nothing is written and `busy` says who."""
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

    merges = [c for c in plan.merge if chosen(c) and len(c.merging) >= 2]
    run = _Chosen(
        [c for c in plan.prune if chosen(c)],
        [c for c in merges if c.survivor_id in {m.trace_id for m in c.merging}],
        [c for c in plan.strengthen if chosen(c)],
        [c for c in plan.derive if chosen(c)],
        [c for c in plan.compact if chosen(c)],
    )
    total = run.total
    yield Progress(0, total, f"writing {total} changes")
    try:
        with brain.writing(actor, "consolidation", lock=LOCK_RUN) as batch:
            live = _current(brain, plan, run)
            for done, _count in enumerate(_write(brain, batch, live, run, result), 1):
                if cancel_requested():
                    raise Cancelled("the consolidation was cancelled; nothing was written")
                if done % 200 == 0 or done == total:
                    yield Progress(done, total, f"wrote {done} of {total} changes")
            result.duration_ms = round((time.perf_counter() - start) * 1000)
            shared_consolidate_steps.log(brain, result)
    except BrainLocked as locked:
        busy = ConsolidationResult(notes=list(plan.notes))
        busy.busy = f"another long operation holds this brain ({locked.holder})"
        return busy
    changes = batch.changes()
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    plan.applied_batch = result.batch_id or ""
    return result


def _current(brain: SharedBrain, plan: ConsolidationPlan, run: _Chosen) -> dict[str, Snap]:
    """The traces the run touches as they are now, locked against other writers until the
    run ends; `ConsolidationOutdated` when one (or a co-activation edge) is not as the plan
    read it."""
    live: dict[str, Snap] = {}
    changed: list[tuple[str, str]] = []
    for trace_id in sorted(run.trace_ids()):
        row = postgres.fetch_row(brain.conn, brain.brain_id, trace_id, lock=True)
        if row is None:
            changed.append((trace_id, "it no longer exists"))
            continue
        snap = store.row_to_snapshot(row)
        live[trace_id] = snap
        seen, now = (
            plan.seen.get(trace_id),
            (snap["version"], snap["last_accessed"], snap["deleted"]),
        )
        if seen is not None and now != seen:
            changed.append((trace_id, how_changed(seen, now)))
    for eid in sorted({p.edge_id for c in run.strengthens for p in c.pairs}):
        edge = shared_consolidate_steps.co_activation_edge(brain.conn, brain.brain_id, eid)
        if edge != plan.seen_edges.get(eid):
            changed.append((f"co-activation edge {eid}", "it changed"))
    if changed:
        raise ConsolidationOutdated(len(changed), *changed[0])
    return live


def _write(
    brain: SharedBrain,
    batch: WriteBatch,
    live: dict[str, Snap],
    run: _Chosen,
    result: ConsolidationResult,
) -> Iterator[int]:
    """Each candidate's write, one at a time, counted in `result` (the caller may stop
    between two)."""
    conn, bid, now = brain.conn, brain.brain_id, brain.now()
    for p in run.prunes:
        before = live[p.trace_id]
        after = dict(before, deleted=True, version=before["version"] + 1, updated_at=now)
        postgres.update_trace(conn, batch, bid, before, after, "forget")
        result.pruned += 1
        yield 1
    for m in run.merges:
        merge_in(brain, batch, [m.survivor_id, *m.losers], m.content, m.survivor_id, verified=True)
        result.merged += len(m.losers)
        yield len(m.losers)
    for s in run.strengthens:
        shared_consolidate_steps.write_strengthen(brain, batch, s)
        result.strengthened += 1
        yield 1
    for n, d in enumerate(run.derives):
        members = [live[i] for i in d.member_ids if i in live and not live[i]["deleted"]]
        insight = shared_consolidate_steps.write_derive(brain, batch, d, members, n)
        result.derived_ids.append(insight)
        result.derived += 1
        yield 1
    for c in run.compacts:
        before = live[c.trace_id]
        after = traces.patched_snapshot(before, {"type": "semantic"}, now)
        postgres.update_trace(conn, batch, bid, before, after, "update")
        result.compacted += 1
        yield 1


def reflect(
    brain: SharedBrain, options: ConsolidationOptions | None = None, actor: str = ACTOR
) -> ConsolidationResult:
    """Plan and apply every candidate in one transaction and one journal batch. With a chat
    model to derive insights, the plan is read first (holding the lock), the model asked
    outside any transaction, then the run writes holding the lock again, refused as
    `ConsolidationOutdated` if the brain changed meanwhile, as a file's reflect is."""
    options = _options(options)
    start = time.perf_counter()
    if DERIVE in options.steps and options.llm is not None and options.max_derived > 0:
        plan = run_to_end(plan_job(brain, options))
        return run_to_end(apply_job(brain, plan, None, lambda: False, actor, start))
    try:
        with brain.writing(actor, "consolidation", lock="reflect") as batch:
            plan, live, wanted = _plan(brain, options, lock=True)
            for _item in consolidate_derive.ask(wanted, live, options, plan.notes, lambda: False):
                pass  # no chat model: the notes say what it would have been asked
            result = ConsolidationResult(notes=list(plan.notes))
            snaps = {trace_id: snap for trace_id, (_n, snap) in live.items()}
            run = _Chosen(plan.prune, plan.merge, plan.strengthen, [], plan.compact)
            for _count in _write(brain, batch, snaps, run, result):
                pass
            result.duration_ms = round((time.perf_counter() - start) * 1000)
            shared_consolidate_steps.log(brain, result)
    except BrainLocked as locked:
        busy = ConsolidationResult()
        busy.busy = f"another long operation holds this brain ({locked.holder})"
        return busy
    changes = batch.changes()
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    return result
