"""One import in the app: plan it, re-plan it, commit it — each step a job of the runner.

The plan and the commit run on a connection of their own to the brain file (opened in the
worker, closed there), so the window's own connection never waits for a long transaction:
its reads and the live-refresh poll go on while a large import is written (WAL readers do
not block the writer). What the commit wrote (its result's `changes`) reaches the views
through the session's change bus, published from the worker as soon as the commit returns
and while the session still counts the write as its own, so the live-refresh watcher knows
the batch as this window's own.

A re-plan carries the person's fixes over (`core.io.planning.fixes`): they are collected
from the old plan on the GUI thread (no brain needed), and laid over the new plan and
checked against the brain in the plan job, off the GUI thread.

The commit goes onto the window's undo stack as `ImportBatchCommand`: undo reverts the
import's journal batch through the core, redo reverts that revert. `ImportRun` follows the
stack and says (`state_changed`) whether the import is in the brain, undone or reverted,
however that came about (its own Revert button or Edit ▸ Undo / Redo).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from memgui.core.brain import Brain
from memgui.core.errors import PlanOutdated
from memgui.core.io import (
    Fixes,
    ImportOptions,
    ImportPlan,
    ImportRecord,
    ImportResult,
    commit,
    fix_alike,
    plan,
    revalidate,
)
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.ui.commands import CoreCommand
from memgui.ui.importing.review_tools import note_text
from memgui.ui.importing.shared_staging import SharedStaging, outdated_reason
from memgui.ui.jobs import Job, JobFactory, JobRunner
from memgui.ui.session import ACTOR, BrainSession

PLAN_JOB = "import plan"
CHECK_JOB = "import check"
COMMIT_JOB = "import"
APPLIED, UNDONE, REVERTED = "applied", "undone", "reverted"


class ImportBatchCommand(CoreCommand):
    """The import a commit wrote, on the undo stack: undo reverts its batch."""

    def __init__(self, session: BrainSession, changes: Changes, text: str) -> None:
        super().__init__(session, text)
        self.changes = changes
        self.batch_id = changes.batch_id

    def _perform(self) -> tuple[None, Changes]:
        return None, self.changes  # the commit job already wrote it


class RevertImportCommand(CoreCommand):
    """ "Revert this import" when other edits came after it: a revert of its own."""

    def __init__(self, session: BrainSession, import_batch_id: str, text: str) -> None:
        super().__init__(session, text)
        self.import_batch_id = import_batch_id

    def _perform(self) -> tuple[Changes, Changes]:
        changes = self.session.brain.revert(self.import_batch_id, actor=ACTOR)
        return changes, changes


def on_own_connection(
    session: BrainSession, work: Callable[[Brain], Generator[Progress, None, Any]], writes: bool
) -> Generator[Progress, None, Any]:
    """Run `work` on a fresh connection to the session's brain, closed when it ends. With
    `writes`, the session counts it as a write of this window while it runs (`work`
    publishes what it changed before it returns)."""
    if not writes:
        brain = session.open_reader()
        try:
            return (yield from work(brain))
        finally:
            brain.close()
    with session.writing():
        brain = session.open_reader()
        try:
            return (yield from work(brain))
        finally:
            brain.close()


class ImportRun(QObject):
    """The plan and commit of one source into the session's brain."""

    progress = Signal(object)  # Progress of the running step
    planned = Signal(object)  # ImportPlan
    committed = Signal(object)  # ImportResult
    failed = Signal(str)  # why a step could not run (a core error, an unreadable source)
    # The commit found the brain holding some of the plan's new memories now (the same
    # source imported meanwhile): nothing was written, and the plan must be made again.
    outdated = Signal(str)
    cancelled = Signal(str)  # "plan" or "commit": the step stopped; nothing was written
    # APPLIED, UNDONE (its own step undone) or REVERTED (a revert step of it done)
    state_changed = Signal(str)

    def __init__(
        self,
        runner: JobRunner,
        session: BrainSession,
        source: str | Path,
        options: ImportOptions | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.runner = runner
        self.session = session
        self.source = Path(source)
        self.options = options or ImportOptions()
        self.plan: ImportPlan | None = None
        self.result: ImportResult | None = None
        self.command: CoreCommand | None = None
        self.job: Job | None = None
        self._listening: list[Any] = []  # the running job's connections to this run
        self.step = ""  # "plan" or "commit" while a job runs
        # The import's step, then each revert step of it, with whether it is done; a step
        # the stack dropped (cut off by a new edit, past its limit) keeps its last state.
        self._steps: list[list[Any]] = []
        self.state = ""
        # On a shared brain: plans are made, checked and committed against staged files.
        self.staging = SharedStaging(session) if session.shared else None

    @property
    def running(self) -> bool:
        return self.job is not None and not self.job.done

    # --- planning -----------------------------------------------------------------------

    def start_plan(self, options: ImportOptions | None = None, fixes: Fixes | None = None) -> Job:
        """Plan (again) in the background; a plan still running is cancelled first. `fixes`
        (the person's, from the plan before) are laid over the new plan in the job."""
        if options is not None:
            self.options = options
        if self.running and self.job is not None:  # the new plan replaces it, unheard
            self.job.cancel()
            self._abandon(self.job)
        source, opts = self.source, ImportOptions(**vars(self.options))
        carried = fixes.copy() if fixes else None  # the job's own: nothing shared across threads
        holder: dict[str, Job] = {}

        def cancel_requested() -> bool:
            job = holder.get("job")
            return job is not None and job.cancel_requested

        def work(brain: Brain) -> Generator[Progress, None, ImportPlan]:
            planned = yield from plan(
                brain, source, options=opts, cancel_requested=cancel_requested
            )
            if carried:
                planned.carried_fixes = carried.reapply(brain, planned)  # checks the brain
            return planned

        staging = self.staging
        if staging is not None:
            job = self._start(
                "plan",
                PLAN_JOB,
                lambda: staging.plan(source, opts, carried, cancel_requested),
                own_thread=True,
            )
        else:
            job = self._start(
                "plan",
                PLAN_JOB,
                lambda: on_own_connection(self.session, work, False),
                own_thread=True,
            )
        holder["job"] = job
        return job

    # --- committing ---------------------------------------------------------------------

    def start_commit(self) -> Job:
        if self.plan is None:
            raise RuntimeError("nothing planned yet")
        planned, session = self.plan, self.session
        holder: dict[str, Job] = {}

        def cancel_requested() -> bool:
            job = holder.get("job")
            return job is not None and job.cancel_requested

        def work(brain: Brain) -> Generator[Progress, None, ImportResult]:
            result = yield from commit(brain, planned, cancel_requested=cancel_requested)
            if result.changes is not None:
                session.publish(result.changes, session)  # still counted as this window's
            return result

        def shared_work() -> Generator[Progress, None, ImportResult]:
            assert staging is not None
            with session.writing():
                result = yield from staging.commit(current, planned, cancel_requested)
                if result.changes is not None:
                    session.publish(result.changes, session)
            return result

        staging = self.staging
        current = staging.current if staging is not None else None
        factory: JobFactory = (
            shared_work if staging is not None else lambda: on_own_connection(session, work, True)
        )
        job = self._start("commit", COMMIT_JOB, factory)
        holder["job"] = job
        return job

    def check_record(
        self, row: int, done: Callable[[ImportRecord], None], failed: Callable[[str], None]
    ) -> Job:
        """Check an edited record again against the brain, as the commit will: in a job on a
        connection of its own (the lookups never on the GUI thread); `done(record)` or
        `failed(why)` follows."""
        if self.plan is None:
            raise RuntimeError("nothing planned yet")
        planned = self.plan

        def work(brain: Brain) -> Generator[Progress, None, ImportRecord]:
            yield Progress(0, 1, "checking the record again")
            return revalidate(brain, planned, row)

        job = self._check(work)
        job.finished.connect(done)
        job.failed.connect(lambda exc: failed(str(exc) or type(exc).__name__))
        return job

    def fix_records(
        self,
        rows: list[int],
        changes: dict[str, Any],
        done: Callable[[tuple[int, int]], None],
        failed: Callable[[str], None],
    ) -> Job:
        """Fix `rows` as one record was fixed (the core's `fix_alike`) and check each again,
        in a job on a connection of its own; `done((passed, still refused))`."""
        if self.plan is None:
            raise RuntimeError("nothing planned yet")
        planned = self.plan

        def work(brain: Brain) -> Generator[Progress, None, tuple[int, int]]:
            text_for = partial(note_text, root=planned.source)
            return fix_alike(brain, planned, rows, changes, text_for)

        job = self._check(work)
        job.finished.connect(done)
        job.failed.connect(lambda exc: failed(str(exc) or type(exc).__name__))
        return job

    def _check(self, work: Callable[[Brain], Generator[Progress, None, Any]]) -> Job:
        """A check of the plan against the brain: on a connection of its own to a file, on
        the plan's staged file on a shared brain."""
        staging = self.staging
        if staging is None:
            return self.runner.start(
                CHECK_JOB, lambda: on_own_connection(self.session, work, False)
            )
        current = staging.current
        return self.runner.start(CHECK_JOB, lambda: staging.on_staged(current, work))

    def dispose(self) -> None:
        """The import window goes: its staged files too (a shared brain's)."""
        if self.staging is not None:
            self.staging.close()

    def cancel(self) -> None:
        """Stop the running step. A plan stops for the window at once: however long its
        reader takes to reach its next check (one slow read), the window does not wait for
        it — the job ends there, on its own thread, and nothing of it is listened to."""
        if not self.running or self.job is None:
            return
        job = self.job
        job.cancel()
        if self.step == "plan":
            self._abandon(job)
            self.job = None
            self.cancelled.emit("plan")

    # --- the undo stack -----------------------------------------------------------------

    def _record_on_undo_stack(self, result: ImportResult) -> None:
        if not result.batch_id or result.changes is None:
            return
        command = ImportBatchCommand(
            self.session, result.changes, f"Import {result.imported} from {self.source.name}"
        )
        self.command = command
        self._steps = [[command, True]]
        self.state = APPLIED
        self.session.undo_stack.indexChanged.connect(self._follow_undo_stack)
        self.session.undo_stack.push(command)  # the first redo() is a no-op: already written

    def revert(self) -> None:
        """Undo this import: its own undo step when it is the latest, else a revert of it."""
        if self.result is None or not self.result.batch_id:
            return
        stack = self.session.undo_stack
        top = stack.command(stack.index() - 1) if stack.index() > 0 else None
        if self.command is not None and top is self.command:
            stack.undo()
            return
        command = RevertImportCommand(
            self.session, self.result.batch_id, f"Revert the import of {self.source.name}"
        )
        command.execute()
        self._steps.append([command, True])
        stack.push(command)

    def _follow_undo_stack(self, index: int) -> None:
        stack = self.session.undo_stack
        positions = {id(stack.command(i)): i for i in range(stack.count())}
        for step in self._steps:
            position = positions.get(id(step[0]))
            if position is not None:
                step[1] = position < index
        done = [step[1] for step in self._steps]
        state = UNDONE if not done[0] else REVERTED if any(done[1:]) else APPLIED
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    # --- the job ------------------------------------------------------------------------

    def _start(self, step: str, name: str, factory: JobFactory, own_thread: bool = False) -> Job:
        # At the app's priority: reading and writing an import is Python most of the time
        # (it holds the GIL), and a niced worker preempted with it stalls the GUI thread.
        job = self.runner.start(name, factory, own_thread=own_thread, nice=False)
        self.job, self.step = job, step
        self._listening = [
            job.progress.connect(self.progress),
            job.finished.connect(lambda value, j=job: self._finished(j, value)),
            job.failed.connect(lambda exc, j=job: self._failed(j, exc)),
            job.cancelled.connect(lambda j=job: self._cancelled(j)),
        ]
        return job

    def _abandon(self, job: Job) -> None:
        """Hear nothing more from `job` (its runner still learns when it ends)."""
        for connection in self._listening:
            QObject.disconnect(connection)
        self._listening = []

    def _is_current(self, job: Job) -> bool:
        return job is self.job

    def _finished(self, job: Job, value: Any) -> None:
        if not self._is_current(job):
            return  # a re-plan replaced this job
        self.job = None
        if isinstance(value, ImportPlan):
            if self.staging is not None:
                self.staging.adopt(value)
            self.plan = value
            self.planned.emit(value)
        else:
            self.result = value
            self._record_on_undo_stack(value)
            self.committed.emit(value)

    def _failed(self, job: Job, exc: BaseException) -> None:
        if self._is_current(job):
            self.job = None
            reason = outdated_reason(exc) if self.staging is not None else None
            if isinstance(exc, PlanOutdated):
                self.outdated.emit(str(exc))
            elif reason is not None:
                self.outdated.emit(reason)
            else:
                self.failed.emit(str(exc) or type(exc).__name__)

    def _cancelled(self, job: Job) -> None:
        if self._is_current(job):
            step, self.job = self.step, None
            self.cancelled.emit(step)
