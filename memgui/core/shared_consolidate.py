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
from typing import TYPE_CHECKING, Any

from memgui.core import consolidate_steps, traces
from memgui.core.consolidate_apply import ConsolidationResult
from memgui.core.consolidate_plan import (
    COMPACT,
    DERIVE,
    MERGE,
    PRUNE,
    STRENGTHEN,
    ConsolidationOptions,
    ConsolidationPlan,
)
from memgui.core.errors import BrainLocked, InvalidArgument
from memgui.core.shared_upkeep import merge_in
from memgui.core.storage import postgres, postgres_scopes, store

if TYPE_CHECKING:
    from memgui.core.shared_brain import SharedBrain

ACTOR = "consolidation"
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
    options = _options(options)
    with brain.conn.transaction():
        brain.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _plan(brain, options, lock=False)[0]


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
            conn, bid, now = brain.conn, brain.brain_id, brain.now()
            for p in plan.prune:
                before = live[p.trace_id][1]
                after = dict(before, deleted=True, version=before["version"] + 1, updated_at=now)
                postgres.update_trace(conn, batch, bid, before, after, "forget")
                result.pruned += 1
            for m in plan.merge:
                ids = [m.survivor_id, *m.losers]
                merge_in(brain, batch, ids, m.content, m.survivor_id, verified=True)
                result.merged += len(m.losers)
            for c in plan.compact:
                before = live[c.trace_id][1]
                after = traces.patched_snapshot(before, {"type": "semantic"}, now)
                postgres.update_trace(conn, batch, bid, before, after, "update")
                result.compacted += 1
            result.duration_ms = round((time.perf_counter() - start) * 1000)
    except BrainLocked as locked:
        busy = ConsolidationResult()
        busy.busy = f"another long operation holds this brain ({locked.holder})"
        return busy
    changes = batch.changes()
    result.batch_id = changes.batch_id if changes else None
    result.changes = changes if changes else None
    return result
