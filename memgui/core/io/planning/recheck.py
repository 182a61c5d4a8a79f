"""Before a commit writes anything: the brain may have got, since the plan was made, a trace
that holds a record the plan calls new (another import of the same file, an agent writing
the same text). Such a commit would write it twice, so it is refused until planned again.

Only what was written since planning is read: traces past the plan's last rowid (new ones,
whoever wrote them) and traces memgui's journal names since the plan's last journal id
(restored, edited, re-filed). A commit of an unchanged brain reads two empty ranges.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memgui.core.errors import PlanOutdated
from memgui.core.io.planning import brain_index
from memgui.core.io.planning.brain_index import AGENT_MEMORY_WHERE
from memgui.core.io.planning.classify import trace_hashes, where_of
from memgui.core.io.records import NEW, TRACE, plain_fields

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.io.planning.plan import ImportPlan


def refuse_outdated(brain: Brain, plan: ImportPlan, chosen: list[int]) -> None:
    """Raise `PlanOutdated` when a chosen new trace record of `plan` is in the brain now;
    call inside the commit's transaction, before it writes."""
    if not plan.options.dedup or "memory_traces" not in brain.db.tables:
        return
    rows = _written_since(brain, plan)
    if not rows:
        return
    jsonl = plan.format == "jsonl"
    index = brain_index.index_of(rows, jsonl)
    clashes: list[tuple[str, str]] = []
    for i in chosen:
        record = plan.records[i]
        if record.kind != TRACE or record.verdict != NEW:
            continue
        fields = plain_fields(record.fields)
        scope, scope_id, user = AGENT_MEMORY_WHERE if jsonl else where_of(fields)
        match = index.find(scope, scope_id, user, trace_hashes(fields, plan.format))
        if match is not None:  # a forgotten one too, as planning would have found it
            clashes.append((record.source, match.trace_id))
    if clashes:
        raise PlanOutdated(len(clashes), *clashes[0])


def _written_since(brain: Brain, plan: ImportPlan) -> list[tuple[Any, ...]]:
    """Key rows of the traces added or changed since planning. Each part is read by its
    own index: one statement with an OR walked a whole brain's index (17 s at 1M)."""
    jsonl = plan.format == "jsonl"
    # NOT INDEXED: the rowid range, not an index of `brain_id` over every trace.
    rows = brain_index.trace_key_rows(
        brain, jsonl, "rowid > ?", (plan.rowid_mark,), table="memory_traces NOT INDEXED"
    )
    if "memgui_journal" not in brain.db.tables:
        return rows
    with brain.db.lock:
        named = [
            r[0]
            for r in brain.db.conn.execute(
                "SELECT DISTINCT trace_id FROM memgui_journal WHERE id > ? AND trace_id <> ''",
                (plan.journal_mark,),
            )
        ]
    for ids in brain_index.chunks(named):
        marks = ",".join("?" * len(ids))
        rows += brain_index.trace_key_rows(brain, jsonl, f"id IN ({marks})", tuple(ids))
    return rows
