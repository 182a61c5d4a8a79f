"""Consolidation of a shared brain (`memgui reflect`), with the rules of a file
(`core/consolidate.py`): the same candidates found the same way (`consolidate_steps`), the
same writes, one journal batch a revert undoes.

The whole run is one transaction holding the brain id's advisory lock, the brain's live
traces locked as it reads them: the plan it applies is the brain as it is, and a second
consolidation (or any long operation, AgentOS's migrations included) is refused meanwhile
with `busy` naming the holder, zero counts and nothing written, as on a file. On
PostgreSQL it prunes, merges copies of the same text and compacts; the steps that need what
a shared brain does not hold yet say so in `notes`: strengthening reads AgentOS's retrieval
feedback, deriving and merging by meaning need the vectors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from memgui.core import consolidate_steps, traces
from memgui.core.consolidate_apply import ConsolidationResult, how_changed
from memgui.core.consolidate_plan import (
    COMPACT,
    DERIVE,
    MERGE,
    PRUNE,
    STRENGTHEN,
    Candidate,
    ConsolidationOptions,
    ConsolidationPlan,
    MergeCluster,
)
from memgui.core.errors import BrainLocked, ConsolidationOutdated, InvalidArgument
from memgui.core.progress import Cancelled, Job, Progress, run_to_end
from memgui.core.shared_upkeep import merge_in
from memgui.core.storage import postgres, postgres_locks, postgres_scopes, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain
    from memgui.core.storage.transaction import WriteBatch

ACTOR = "consolidation"
LOCK_PLAN, LOCK_RUN = "consolidation plan", "consolidation"  # what a refused one is told
_NOT_HERE = {
    STRENGTHEN: "strengthen: AgentOS's retrieval feedback is not kept on a PostgreSQL brain "
    "yet; skipped",
    DERIVE: "derive: needs the brain's vectors, not searched on a PostgreSQL brain yet; skipped",
}
_BY_TEXT = "merge: copies of the same text only (merging by meaning needs the vectors)"


def _options(options: ConsolidationOptions | None) -> ConsolidationOptions:
    if options is not None and not isinstance(options, ConsolidationOptions):
        raise InvalidArgument(
            "options", f"must be ConsolidationOptions (got {options!r:.80})", options
        )
    return (options or ConsolidationOptions()).validated()


def _plan(
    brain: SharedBrain, options: ConsolidationOptions, lock: bool
) -> tuple[ConsolidationPlan, dict[str, tuple[int, dict[str, Any]]]]:
    now = brain.now()
    plan = ConsolidationPlan(brain.brain_id, options, now)
    rows = postgres_scopes.live_rows(brain.conn, brain.brain_id, lock)
    live = {str(r[1]): (0, store.row_to_snapshot(r)) for r in rows}
    steps = options.steps
    gone: set[str] = set()
    if PRUNE in steps:
        plan.prune = consolidate_steps.prune(live, options, now)
        gone |= {c.trace_id for c in plan.prune}
    if MERGE in steps:
        for event in consolidate_steps.merge(None, live, options, gone, lambda: False):
            if isinstance(event, list):
                plan.merge = event
        gone |= {i for c in plan.merge for i in c.losers}
        plan.notes.append(_BY_TEXT)
    if COMPACT in steps:
        plan.compact = consolidate_steps.compact(live, options, now, gone)
    plan.notes += [note for step, note in _NOT_HERE.items() if step in steps]
    for trace_id in (
        {c.trace_id for c in plan.prune}
        | {c.trace_id for c in plan.compact}
        | {m.trace_id for c in plan.merge for m in c.members}
    ):
        s = live[trace_id][1]
        plan.seen[trace_id] = (s["version"], s["last_accessed"], s["deleted"])
    return plan, live


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
    plan is empty and `busy` names the holder."""
    options = _options(options)
    start = time.perf_counter()
    yield Progress(0, None, "reading the brain")
    try:
        with brain.conn.transaction():
            brain.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            postgres_locks.hold(brain.conn, brain.brain_id, LOCK_PLAN, str(brain.address))
            plan = _plan(brain, options, lock=False)[0]
    except BrainLocked as locked:
        plan = ConsolidationPlan(brain.brain_id, options, brain.now())
        plan.busy = f"another long operation holds this brain ({locked.holder})"
        return plan
    if cancel_requested is not None and cancel_requested():
        raise Cancelled("the consolidation plan was cancelled")
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
) -> Job[ConsolidationResult]:
    """`consolidate.apply` on a shared brain (a job): the accepted candidates in one
    transaction and one journal batch, holding the brain id's advisory lock for the run (as
    AgentOS's reflect does); a trace the plan names that changed since is
    `ConsolidationOutdated`, a cancel `Cancelled`: nothing is written either way. While
    another long operation holds the brain, nothing is written and `busy` says who."""
    start = time.perf_counter()
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

    prunes = [c.trace_id for c in plan.prune if chosen(c)]
    merges = [c for c in plan.merge if chosen(c) and len(c.merging) >= 2]
    merges = [c for c in merges if c.survivor_id in {m.trace_id for m in c.merging}]
    compacts = [c.trace_id for c in plan.compact if chosen(c)]
    total = len(prunes) + len(merges) + len(compacts)
    yield Progress(0, total, f"writing {total} changes")
    try:
        with brain.writing(actor, "consolidation", lock=LOCK_RUN) as batch:
            ids = {*prunes, *compacts, *(m.trace_id for c in merges for m in c.merging)}
            live = _current(brain, plan, sorted(ids))
            steps = _write(brain, batch, live, prunes, merges, compacts)
            for done, _count in enumerate(steps, 1):
                if cancel_requested():
                    raise Cancelled("the consolidation was cancelled; nothing was written")
                if done % 200 == 0 or done == total:
                    yield Progress(done, total, f"wrote {done} of {total} changes")
            result.pruned, result.merged, result.compacted = _counts(prunes, merges, compacts)
            result.duration_ms = round((time.perf_counter() - start) * 1000)
    except BrainLocked as locked:
        busy = ConsolidationResult(notes=list(plan.notes))
        busy.busy = f"another long operation holds this brain ({locked.holder})"
        return busy
    changes = batch.changes()
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    plan.applied_batch = result.batch_id or ""
    return result


def _counts(
    prunes: list[str], merges: list[MergeCluster], compacts: list[str]
) -> tuple[int, int, int]:
    return len(prunes), sum(len(c.losers) for c in merges), len(compacts)


def _current(
    brain: SharedBrain, plan: ConsolidationPlan, ids: list[str]
) -> dict[str, dict[str, Any]]:
    """The traces `ids` as they are now, locked against other writers until the run
    ends; `ConsolidationOutdated` when one is not as the plan read it."""
    live: dict[str, dict[str, Any]] = {}
    changed: list[tuple[str, str]] = []
    for trace_id in ids:
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
    if changed:
        raise ConsolidationOutdated(len(changed), *changed[0])
    return live


def _write(
    brain: SharedBrain,
    batch: WriteBatch,
    live: dict[str, dict[str, Any]],
    prunes: list[str],
    merges: list[MergeCluster],
    compacts: list[str],
) -> Iterator[int]:
    """Each accepted candidate's write, one at a time (the caller may stop between two)."""
    conn, bid, now = brain.conn, brain.brain_id, brain.now()
    for trace_id in prunes:
        before = live[trace_id]
        after = dict(before, deleted=True, version=before["version"] + 1, updated_at=now)
        postgres.update_trace(conn, batch, bid, before, after, "forget")
        yield 1
    for m in merges:
        merge_in(brain, batch, [m.survivor_id, *m.losers], m.content, m.survivor_id, verified=True)
        yield len(m.losers)
    for trace_id in compacts:
        before = live[trace_id]
        after = traces.patched_snapshot(before, {"type": "semantic"}, now)
        postgres.update_trace(conn, batch, bid, before, after, "update")
        yield 1


def reflect(
    brain: SharedBrain, options: ConsolidationOptions | None = None, actor: str = ACTOR
) -> ConsolidationResult:
    """Plan and apply every candidate in one transaction and one journal batch."""
    options = _options(options)
    start = time.perf_counter()
    try:
        with brain.writing(actor, "consolidation", lock="reflect") as batch:
            plan, live = _plan(brain, options, lock=True)
            result = ConsolidationResult(notes=list(plan.notes))
            snaps = {trace_id: snap for trace_id, (_n, snap) in live.items()}
            prunes = [p.trace_id for p in plan.prune]
            compacts = [c.trace_id for c in plan.compact]
            for _count in _write(brain, batch, snaps, prunes, plan.merge, compacts):
                pass
            result.pruned, result.merged, result.compacted = _counts(prunes, plan.merge, compacts)
            result.duration_ms = round((time.perf_counter() - start) * 1000)
    except BrainLocked as locked:
        busy = ConsolidationResult()
        busy.busy = f"another long operation holds this brain ({locked.holder})"
        return busy
    changes = batch.changes()
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    return result
