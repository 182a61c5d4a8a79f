"""One consolidation in the app: plan it, re-plan it, apply it — each step a job of the runner.

As an import does (`importing/import_jobs.py`), the plan and the apply run on connections
of their own, so the window's reads go on meanwhile; the apply's changes reach the views
through the session's bus as this window's own (the Agent activity counts them reviewed).
The applied batch goes onto the window's undo stack: Edit ▸ Undo reverts the whole run;
`undo()` does the same when other edits came after it (a revert of its own).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from PySide6.QtCore import QObject, Signal

from memgui.core.brain import Brain
from memgui.core.consolidate import (
    ConsolidationOptions,
    ConsolidationPlan,
    ConsolidationResult,
    apply,
    plan_consolidation,
)
from memgui.core.errors import PlanOutdated
from memgui.core.progress import Progress
from memgui.ui.commands import CoreCommand
from memgui.ui.importing.import_jobs import (
    ImportBatchCommand,
    RevertImportCommand,
    on_own_connection,
)
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.session import BrainSession

PLAN_JOB, APPLY_JOB = "consolidation plan", "consolidation"
APPLIED, UNDONE = "applied", "undone"


def summary(result: ConsolidationResult) -> str:
    counts = result.seed_counts()
    return (
        f"pruned {counts['pruned']}, merged {counts['merged']}, {result.derived} insight(s), "
        f"{result.strengthened} strengthened, compacted {counts['compacted']}"
    )


class ConsolidationRun(QObject):
    """The plan and apply of one consolidation of the session's brain."""

    progress = Signal(object)  # Progress of the running step
    planned = Signal(object)  # ConsolidationPlan
    applied = Signal(object)  # ConsolidationResult
    failed = Signal(str)
    outdated = Signal(str)  # the brain changed since planning: nothing written, plan again
    cancelled = Signal(str)  # "plan" or "apply": nothing was written
    state_changed = Signal(str)  # APPLIED or UNDONE, however it came about

    def __init__(self, runner: JobRunner, session: BrainSession, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.session = session
        self.plan: ConsolidationPlan | None = None
        self.result: ConsolidationResult | None = None
        self.command: CoreCommand | None = None
        self._reverts: list[CoreCommand] = []  # revert steps of it (undo() after other edits)
        self.job: Job | None = None
        self.step = ""
        self.state = ""

    @property
    def running(self) -> bool:
        # Until this thread has taken the job's outcome: the worker marks the job done
        # before its outcome's signal arrives here.
        return self.job is not None

    def start_plan(self, options: ConsolidationOptions) -> Job:
        self.cancel()

        def work(brain: Brain, stop: Callable[[], bool]) -> Generator[Progress, None, Any]:
            return plan_consolidation(brain, options, cancel_requested=stop)

        return self._start("plan", PLAN_JOB, work, writes=False)

    def start_apply(self) -> Job:
        if self.plan is None:
            raise RuntimeError("nothing planned yet")
        planned, session = self.plan, self.session

        def work(brain: Brain, stop: Callable[[], bool]) -> Generator[Progress, None, Any]:
            result = yield from apply(brain, planned, cancel_requested=stop)
            if result.changes is not None:
                session.publish(result.changes, session)  # counted as this window's own
            return result

        return self._start("apply", APPLY_JOB, work, writes=True)

    def cancel(self) -> None:
        if self.job is not None and not self.job.done:
            self.job.cancel()

    # --- the undo stack -----------------------------------------------------------------------

    def undo(self) -> None:
        """Undo the applied run: its own undo step when it is the latest, else a revert."""
        if self.result is None or not self.result.batch_id or self.state != APPLIED:
            return
        stack = self.session.undo_stack
        top = stack.command(stack.index() - 1) if stack.index() > 0 else None
        if self.command is not None and top is self.command:
            stack.undo()
            return
        revert = RevertImportCommand(self.session, self.result.batch_id, "Revert the consolidation")
        revert.execute()
        self._reverts.append(revert)
        stack.push(revert)

    def _follow_undo_stack(self, index: int) -> None:
        """Applied while its step is done and none of its reverts is (a step the stack
        dropped keeps the state it had)."""
        stack = self.session.undo_stack
        done = {id(stack.command(i)): i < index for i in range(stack.count())}
        applied = done.get(id(self.command), self.state == APPLIED)
        if any(done.get(id(r), False) for r in self._reverts):
            applied = False
        self._set_state(APPLIED if applied else UNDONE)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    # --- the jobs -------------------------------------------------------------------------------

    def _start(self, step: str, name: str, work: Any, writes: bool) -> Job:
        holder: dict[str, Job] = {}

        def stop_asked() -> bool:
            job = holder.get("job")
            return job is not None and job.cancel_requested

        job = self.runner.start(
            name,
            lambda: on_own_connection(self.session, lambda b: work(b, stop_asked), writes),
        )
        holder["job"] = job
        self.job, self.step = job, step
        job.progress.connect(self.progress)
        job.finished.connect(lambda value, j=job: self._finished(j, value))
        job.failed.connect(lambda exc, j=job: self._failed(j, exc))
        job.cancelled.connect(lambda j=job: self._cancelled(j))
        return job

    def _finished(self, job: Job, value: Any) -> None:
        if job is not self.job:
            return  # a re-plan replaced this job
        self.job = None
        if isinstance(value, ConsolidationPlan):
            self.plan = value
            self.planned.emit(value)
            return
        self.result = value
        if value.batch_id and value.changes is not None:
            self.command = ImportBatchCommand(
                self.session, value.changes, f"Consolidate ({summary(value)})"
            )
            self.session.undo_stack.push(self.command)  # already written: redo() is a no-op
            self.session.undo_stack.indexChanged.connect(self._follow_undo_stack)
            self._set_state(APPLIED)
        self.applied.emit(value)

    def _failed(self, job: Job, exc: BaseException) -> None:
        if job is self.job:
            self.job = None
            if isinstance(exc, PlanOutdated):
                self.outdated.emit(str(exc))
            else:
                self.failed.emit(str(exc) or type(exc).__name__)

    def _cancelled(self, job: Job) -> None:
        if job is self.job:
            step, self.job = self.step, None
            self.cancelled.emit(step)
