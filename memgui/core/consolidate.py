"""Consolidation as a plan a person can review: plan → review → apply (seed 000 `memory_reflect`).

    from memgui.core.consolidate import ConsolidationOptions, apply, plan_consolidation
    plan = run_to_end(plan_consolidation(brain, ConsolidationOptions()))   # writes nothing
    plan.merge[0].choose_survivor(some_id); plan.prune[3].accepted = False
    result = run_to_end(apply(brain, plan))     # one transaction, one journal batch
    brain.revert(result.batch_id)               # undoes the whole run

On a shared brain (PostgreSQL) the same two calls plan and apply there
(`shared_consolidate`), holding the brain id's advisory lock instead of the file's.

AgentOS, mem0 and others consolidate blind; here every step's candidates are listed with why
(`consolidate_plan`), found as AgentOS's loop finds them (`consolidate_steps`,
`consolidate_derive`), and written only when accepted (`consolidate_apply`): soft deletes
only, never a hard delete. One consolidation runs at a time per brain, across processes
(`consolidate_lock`): a second one gets zero counts, as the seed says.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING

from memgui.core import consolidate_derive, consolidate_steps
from memgui.core.consolidate_apply import ConsolidationResult, write_plan
from memgui.core.consolidate_lock import ConsolidationLock
from memgui.core.consolidate_plan import (
    COMPACT,
    DERIVE,
    MERGE,
    PRUNE,
    REINDEX,
    STEPS,
    STRENGTHEN,
    CompactCandidate,
    ConsolidationOptions,
    ConsolidationPlan,
    DeriveCandidate,
    MergeCluster,
    PruneCandidate,
    StrengthenCandidate,
)
from memgui.core.errors import InvalidArgument
from memgui.core.progress import Job, Progress, run_to_end

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.shared_brain import SharedBrain

__all__ = [
    "STEPS",
    "CompactCandidate",
    "ConsolidationOptions",
    "ConsolidationPlan",
    "ConsolidationResult",
    "DeriveCandidate",
    "MergeCluster",
    "PruneCandidate",
    "StrengthenCandidate",
    "apply",
    "plan_consolidation",
    "reflect",
]

ACTOR = "consolidation"


def _never() -> bool:
    return False


def plan_consolidation(
    brain: Brain,
    options: ConsolidationOptions | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[ConsolidationPlan]:
    """Find every step's candidates (a job: yields Progress, returns the plan); writes
    nothing. While another consolidation of the brain runs, the plan is empty and `busy`
    says who holds it."""
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_consolidate

        return (yield from shared_consolidate.plan_job(shared, options, cancel_requested))
    options = _options(options)
    with ConsolidationLock(brain.path) as holder:
        if holder is not None:
            return _busy_plan(brain, options, holder)
        return (yield from _plan(brain, options, cancel_requested or _never))


def _shared(brain: object) -> SharedBrain | None:
    """`brain` when it is a shared brain (PostgreSQL): `shared_consolidate` runs there."""
    from memgui.core.shared_brain import SharedBrain

    return brain if isinstance(brain, SharedBrain) else None


def _options(options: ConsolidationOptions | None) -> ConsolidationOptions:
    if options is not None and not isinstance(options, ConsolidationOptions):
        raise InvalidArgument(
            "options", f"must be ConsolidationOptions (got {options!r:.80})", options
        )
    return (options or ConsolidationOptions()).validated()


def _busy_plan(brain: Brain, options: ConsolidationOptions, holder: str) -> ConsolidationPlan:
    plan = ConsolidationPlan(brain.brain_id, options, brain.now())
    plan.busy = f"another consolidation of this brain is running ({holder})"
    return plan


def _plan(
    brain: Brain, options: ConsolidationOptions, cancel_requested: Callable[[], bool]
) -> Job[ConsolidationPlan]:
    start = time.perf_counter()
    now = brain.now()
    plan = ConsolidationPlan(brain.brain_id, options, now)
    steps = options.steps
    yield Progress(0, None, "reading the brain")
    traces = consolidate_steps.live_traces(brain)
    gone: set[str] = set()  # what earlier steps remove: later steps leave it alone
    if PRUNE in steps:
        plan.prune = consolidate_steps.prune(traces, options, now)
        gone |= {c.trace_id for c in plan.prune}
    yield Progress(0, None, f"{len(plan.prune)} to prune; looking for duplicates")
    if MERGE in steps:
        vectors = partial(consolidate_steps.file_vectors, brain, traces)
        for event in consolidate_steps.merge(vectors, traces, options, gone, cancel_requested):
            if isinstance(event, Progress):
                yield event
            else:
                plan.merge = event
        gone |= {i for c in plan.merge for i in c.losers}
    if cancel_requested():
        return _cancelled()
    if STRENGTHEN in steps:
        plan.strengthen, plan.seen_edges = consolidate_steps.strengthen(brain, traces, gone)
    if DERIVE in steps:
        yield Progress(0, None, "looking for clusters to derive insights from")
        for item in consolidate_derive.derive(
            brain, traces, options, gone, plan.notes, cancel_requested
        ):
            if isinstance(item, Progress):
                yield item
            else:
                plan.derive = item
    if COMPACT in steps:
        plan.compact = consolidate_steps.compact(traces, options, now, gone)
    if REINDEX in steps:
        plan.reindex_pending = consolidate_steps.pending_index_rows(brain)
    for trace_id in _touched(plan):
        s = traces[trace_id][1]
        plan.seen[trace_id] = (s["version"], s["last_accessed"], s["deleted"])
    plan.duration_ms = round((time.perf_counter() - start) * 1000)
    total = sum(plan.counts.values())
    yield Progress(total, total, f"planned: {_describe(plan.counts)}")
    return plan


def _cancelled() -> ConsolidationPlan:
    from memgui.core.progress import Cancelled

    raise Cancelled("the consolidation plan was cancelled")


def _touched(plan: ConsolidationPlan) -> set[str]:
    ids = {c.trace_id for c in plan.prune} | {c.trace_id for c in plan.compact}
    ids |= {m.trace_id for c in plan.merge for m in c.members}
    ids |= {i for c in plan.strengthen for i in c.trace_ids}
    ids |= {i for c in plan.derive for i in c.member_ids}
    return ids


def _describe(counts: dict[str, int]) -> str:
    return ", ".join(f"{step} {n}" for step, n in counts.items())


def apply(
    brain: Brain,
    plan: ConsolidationPlan,
    accepted: Iterable[str] | None = None,
    cancel_requested: Callable[[], bool] | None = None,
    actor: str = ACTOR,
) -> Job[ConsolidationResult]:
    """Write the plan's accepted candidates in one transaction and one journal batch (a
    job). `accepted`: candidate keys (`plan.candidate(key)`); None takes each candidate's
    own `accepted` flag. A plan the brain has overtaken since (a trace it names was edited,
    recalled, forgotten or merged meanwhile) is refused with `ConsolidationOutdated`;
    nothing is written. While another consolidation runs, nothing is written either and the
    result has zero counts and says so (`busy`)."""
    if not isinstance(plan, ConsolidationPlan):
        raise InvalidArgument("plan", f"must be a ConsolidationPlan (got {plan!r:.80})", plan)
    if plan.brain_id != brain.brain_id:
        raise InvalidArgument(
            "plan",
            f"was made for brain {plan.brain_id!r}, not {brain.brain_id!r}; plan it again",
            plan.brain_id,
        )
    keys = None if accepted is None else _checked_keys(plan, accepted)
    if (shared := _shared(brain)) is not None:
        from memgui.core import shared_consolidate

        stop = cancel_requested or _never
        return (yield from shared_consolidate.apply_job(shared, plan, keys, stop, actor))
    with ConsolidationLock(brain.path) as holder:
        if holder is not None:
            result = ConsolidationResult()
            result.busy = f"another consolidation of this brain is running ({holder})"
            return result
        return (yield from write_plan(brain, plan, keys, cancel_requested or _never, actor))


def _checked_keys(plan: ConsolidationPlan, accepted: Iterable[str]) -> set[str]:
    if isinstance(accepted, str):
        raise InvalidArgument("accepted", f"must be a list of candidate keys (got {accepted!r})")
    keys = set(accepted)
    for key in keys:
        plan.candidate(key)  # InvalidArgument for a key the plan does not hold
    return keys


def reflect(
    brain: Brain,
    options: ConsolidationOptions | None = None,
    actor: str = ACTOR,
    on_progress: Callable[[Progress], None] | None = None,
) -> ConsolidationResult:
    """Plan and apply every candidate, holding the brain's consolidation throughout: what
    `memory_reflect` and `memgui reflect` do. Journaled as one batch, revertible."""
    options = _options(options)
    start = time.perf_counter()
    with ConsolidationLock(brain.path) as holder:
        if holder is not None:
            result = ConsolidationResult()
            result.busy = f"another consolidation of this brain is running ({holder})"
            return result
        plan = run_to_end(_plan(brain, options, _never), on_progress)
        return run_to_end(write_plan(brain, plan, None, _never, actor, start), on_progress)
