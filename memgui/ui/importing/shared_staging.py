"""An import run's plans into a shared brain, each against a staged file of the brain.

On a shared brain the core plans an import against a file it copies the brain into, and
commits the reviewed plan there before replaying its batch on the server in one transaction
(`core/shared_import.py`). Each plan job of the window stages a file of its own (a re-plan
may start while the plan it replaces still runs: they never share one); the run keeps the
staged file of the plan the review shows (`adopt`), against which the review's checks and
the commit run, and removes the others as soon as they are of no use. Each job opens its own
connection to the server and closes it when it ends, as a file's import jobs do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TypeVar, cast

from memgui.core.brain import Brain
from memgui.core.errors import Conflict
from memgui.core.io import Fixes, ImportOptions, ImportPlan, ImportResult
from memgui.core.progress import Progress
from memgui.core.shared_brain import SharedBrain
from memgui.core.shared_import import SharedImport
from memgui.ui.session import BrainSession

T = TypeVar("T")


class StagedPlanGone(RuntimeError):
    """The staged file of the plan was removed (its brain closed, or a failed commit)."""

    def __init__(self) -> None:
        super().__init__("this import's plan is no longer staged: plan it again")


def outdated_reason(exc: BaseException) -> str | None:
    """Why a commit into a shared brain found the plan outdated, or None when it did not: a
    trace the plan changes was changed on the server since (a `Conflict`)."""
    if isinstance(exc, Conflict):  # "trace … changed on the server since …; nothing was …"
        return str(exc).removeprefix("conflict: ")
    return None


class SharedStaging:
    """The staged files of one `ImportRun` into the shared brain of `session`."""

    def __init__(self, session: BrainSession) -> None:
        self.session = session
        self.current: SharedImport | None = None  # the staging of the plan under review
        self._made: dict[int, SharedImport] = {}  # planned, not adopted yet: by plan id
        self._lock = threading.Lock()  # `_made` is filled in workers, emptied on the GUI
        self._closed = False

    def _open(self) -> SharedBrain:
        return cast(SharedBrain, self.session.open_reader())

    # --- in the jobs ---------------------------------------------------------------------

    def plan(
        self,
        source: Path,
        options: ImportOptions,
        carried: Fixes | None,
        cancel_requested: Callable[[], bool],
    ) -> Generator[Progress, None, ImportPlan]:
        """Stage the brain into a new file and plan `source` against it; the person's
        `carried` fixes are laid over the plan and checked against that file."""
        server = self._open()
        staging = SharedImport(server)
        try:
            planned = yield from staging.plan(
                source, options=options, cancel_requested=cancel_requested
            )
            staged = staging.staged
            if carried and staged is not None:
                planned.carried_fixes = carried.reapply(staged, planned)
        except BaseException:  # failed or cancelled: its staged file goes with it
            staging.close()
            raise
        finally:
            server.close()
        with self._lock:
            closed = self._closed
            if not closed:
                self._made[id(planned)] = staging
        if closed:  # the import window went while this plan ran
            staging.close()
        return planned

    def on_staged(
        self, staging: SharedImport | None, work: Callable[[Brain], Generator[Progress, None, T]]
    ) -> Generator[Progress, None, T]:
        """`work` on the staged file of the plan under review (the review's checks)."""
        staged = staging.staged if staging is not None else None
        if staged is None:
            raise StagedPlanGone()
        return (yield from work(staged))

    def commit(
        self,
        staging: SharedImport | None,
        planned: ImportPlan,
        cancel_requested: Callable[[], bool],
    ) -> Generator[Progress, None, ImportResult]:
        """Commit the reviewed plan into its staged file, then on the server (one
        transaction under the brain's advisory lock), on a connection of this job."""
        if staging is None or staging.staged is None:
            raise StagedPlanGone()
        server = self._open()
        self.session.note_own_connection(server)  # its notices are this window's own
        staging.shared = server
        try:
            return (yield from staging.commit(planned, cancel_requested=cancel_requested))
        finally:
            server.close()

    # --- on the GUI thread ---------------------------------------------------------------

    def adopt(self, planned: ImportPlan) -> None:
        """`planned` is the plan the review shows now: keep its staged file; remove the
        one before and those of plans replaced before they were shown."""
        with self._lock:
            staging = self._made.pop(id(planned), None)
            unused = list(self._made.values())
            self._made.clear()
        if staging is not None:
            if self.current is not None:
                unused.append(self.current)
            self.current = staging
        for other in unused:
            other.close()

    def close(self) -> None:
        """Remove every staged file (the import window closed; no job of it runs)."""
        with self._lock:
            self._closed = True
            unused = list(self._made.values())
            self._made.clear()
        if self.current is not None:
            unused.append(self.current)
            self.current = None
        for other in unused:
            other.close()
