"""Committing a reviewed import plan: every accepted record in one transaction, one batch.

`commit(brain, plan, accept)` is a core job. It writes the records whose verdict is `new` or
`update` and that are accepted (`record.accepted`, and their index in `accept` when given),
plus any refused record the person fixed (checked again first), all inside one
`brain.write(…, actor="import:<format>")`: one transaction and one journal batch, which
`brain.revert(batch_id)` undoes. New traces enter the full-text indexes as they are
written, other changed rows once at the end, all inside the same transaction, so a killed
process leaves the brain exactly as it was. Cancelling between
progress events rolls everything back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memgui.core.errors import InvalidArgument
from memgui.core.io.planning import recheck
from memgui.core.io.planning.classify import fingerprint
from memgui.core.io.planning.plan import ImportPlan
from memgui.core.io.planning.validate import check_trace_fields
from memgui.core.io.records import (
    DUPLICATE,
    ERROR,
    NEW,
    REFUSED,
    SKIPPED,
    TRACE,
    UPDATE,
    ImportRecord,
)
from memgui.core.io.writing import commit_rows
from memgui.core.model import Changes
from memgui.core.progress import Cancelled, Job, Progress, gc_paused
from memgui.core.search import fulltext

if TYPE_CHECKING:
    from memgui.core.brain import Brain

PROGRESS_EVERY = 500
INDEX_BATCH = 1000  # rows indexed between two progress reports (one statement per index)


@dataclass
class ImportResult:
    """What a commit did. imported + skipped + refused + len(errors) == records planned."""

    imported: int = 0
    skipped: int = 0  # duplicates, updates, expired, not accepted
    refused: int = 0
    updated: int = 0  # of the skipped: existing traces or rows this import added to
    errors: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # the plan's verdicts at commit
    batch_id: str | None = None
    format: str = ""
    # What the commit wrote (traces added or edited, links, graph and other rows); None
    # when it wrote nothing.
    changes: Changes | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "skipped": self.skipped,
            "refused": self.refused,
            "updated": self.updated,
            "errors": list(self.errors),
            "batch_id": self.batch_id,
        }


def revalidate(brain: Brain, plan: ImportPlan, index: int) -> ImportRecord:
    """Check an edited refused / error trace record again; valid, it becomes `new`.

    A record that now passes is compared with the brain (its text in its scope) and takes a
    free id; one that still fails is refused again, naming the field, the rule and the value.
    """
    record = plan.records[index]
    if record.kind != TRACE:
        return record
    try:
        check_trace_fields(record.fields)
    except InvalidArgument as error:
        record.refuse(error.field, f"{error.field} {error.problem}", error.value)
        plan.fingerprints[index] = fingerprint(record.fields)
        return record
    record.verdict, record.reason, record.problem_field, record.value = NEW, "", None, None
    plan.fingerprints.pop(index, None)
    match = commit_rows.find_trace(brain, record.fields) if plan.options.dedup else None
    if match is not None:
        record.verdict, record.existing_id = DUPLICATE, match
        record.reason = f"same text as trace {match} in its scope"
        return record
    wanted = record.fields.get("id")
    taken = isinstance(wanted, str) and commit_rows.trace_exists(brain, wanted)
    plan.resolved[index] = {"id": wanted if isinstance(wanted, str) and not taken else None}
    return record


def _edited(plan: ImportPlan, index: int, record: ImportRecord) -> bool:
    held = plan.fingerprints.get(index)
    return held is not None and fingerprint(record.fields) != held


def _chosen(brain: Brain, plan: ImportPlan, accept: set[int] | None) -> list[int]:
    chosen: list[int] = []
    for i, record in enumerate(plan.records):
        if i in plan.written or not record.accepted or (accept is not None and i not in accept):
            continue
        if record.verdict in (REFUSED, ERROR) and _edited(plan, i, record):
            revalidate(brain, plan, i)
        if record.verdict in (NEW, UPDATE):
            chosen.append(i)  # a new trace is checked again as its row is built
    return chosen


def commit(
    brain: Brain,
    plan: ImportPlan,
    accept: Iterable[int] | None = None,
    cancel_requested: Callable[[], bool] | None = None,
) -> Job[ImportResult]:
    """Write the accepted records of `plan` (see the module docstring); returns ImportResult."""
    if not isinstance(plan, ImportPlan):
        raise InvalidArgument("plan", f"must be an ImportPlan (got {plan!r:.80})", plan)
    # The rows built for the bulk inserts all live on until written: nothing to collect.
    # Paused for the whole job, like its transaction: a cancel or a close unwinds both
    # (pausing step by step measured ~0.5 s more CPU per 100k records).
    with gc_paused():
        return (yield from _commit(brain, plan, accept, cancel_requested))


def _commit(
    brain: Brain,
    plan: ImportPlan,
    accept: Iterable[int] | None,
    cancel_requested: Callable[[], bool] | None,
) -> Job[ImportResult]:
    if plan.brain_id != brain.brain_id:
        raise InvalidArgument(
            "plan",
            f"was made for brain {plan.brain_id!r}, not {brain.brain_id!r}; plan it again",
            plan.brain_id,
        )
    chosen = _chosen(brain, plan, None if accept is None else set(accept))
    result = ImportResult(format=plan.format)
    total = len(chosen)
    yield Progress(0, total, f"writing {total} records")
    written: set[int] = set()
    if chosen:
        write = brain.write("import", kind="import", actor=f"import:{plan.format}")
        with write as batch:
            recheck.refuse_outdated(brain, plan, chosen)
            writer = commit_rows.RowWriter(brain, plan, batch, result)
            for done, i in enumerate(writer.ordered(chosen), start=1):
                writer.write(i)
                if done % PROGRESS_EVERY == 0:
                    if cancel_requested is not None and cancel_requested():
                        raise Cancelled("the import was cancelled; nothing was written")
                    yield Progress(done, total, f"wrote {done} of {total} records")
            # The rows still held for bulk inserts, the links and vectors; then the
            # full-text indexes of the traces edited (new ones were indexed as they were
            # written): each phase says so, and the index its progress, so the bar never
            # stands at the rows' end meanwhile.
            yield Progress(0, None, f"storing {total} records and their links")
            writer.finish()
            written = writer.written
            waiting = fulltext.pending_count(brain.db)
            if waiting:
                yield Progress(0, waiting, f"indexing {waiting} memories for search")
            steps = fulltext.flushing(brain.db, INDEX_BATCH)
            for indexed in steps:
                yield Progress(indexed, waiting, f"indexed {indexed} of {waiting} for search")
            if writer.indexed >= fulltext.FLUSH_BATCH:
                # The new traces went into the indexes as they were written: their
                # segments merged before the commit, as a big flush merges its own.
                for _ in fulltext.merging(brain.db):
                    yield Progress(0, None, f"merging the search index of {total} records")
            result.batch_id = batch.batch_id if (written or writer.wrote_any) else None
        plan.written |= written  # after the transaction committed: a re-commit skips them
        result.changes = write.changes if result.batch_id else None
    # No yield from here on: a job is cancelled at a yield, and one after the commit would be
    # reported as a cancelled import while every record is in the brain.
    count_verdicts(plan, written, result)
    return result


def count_verdicts(plan: ImportPlan, written: set[int], result: ImportResult) -> None:
    """Fill `result`'s counts: what was written, skipped, refused, could not be read."""
    for i, record in enumerate(plan.records):
        if i in written:
            if record.verdict == UPDATE:
                result.skipped += 1
                result.updated += 1
            else:
                result.imported += 1
        elif record.verdict == REFUSED:
            result.refused += 1
        elif record.verdict == ERROR:
            result.errors.append(f"{record.source}: {record.reason}")
        else:
            result.skipped += 1  # duplicate, skipped, not accepted
    found = Counter(record.verdict for record in plan.records)  # one pass, not one a verdict
    result.counts = {v: found[v] for v in (NEW, DUPLICATE, UPDATE, REFUSED, ERROR, SKIPPED)}
