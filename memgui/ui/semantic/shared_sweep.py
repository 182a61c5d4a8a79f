"""The TTL sweep of a shared brain while the window shows it: what the upkeep thread does
for a file (`core.maintenance.Maintainer`), done on a shared brain by a job of the window's
runner every `interval` seconds (`maintenance/interval_s`), on a connection of its own
(`SharedBrain.sweep`, as `memgui sweep`), journaled under `sweep` and revertible. One sweep
at a time; closing the brain never waits for one (it ends on its own connection)."""

from __future__ import annotations

from collections.abc import Generator
from typing import cast

from PySide6.QtCore import QObject, QTimer

from memgui.core.maintenance import SWEEP_ACTOR
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.core.shared_brain import SharedBrain
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.session import BrainSession

SWEEP_JOB = "sweep"  # a quiet job: closing never asks about it


def _sweep(session: BrainSession) -> Generator[Progress, None, int]:
    reader = cast(SharedBrain, session.open_reader())
    session.note_own_connection(reader)  # its rows are announced below, as the upkeep's
    try:
        yield Progress(0, None, "sweeping expired memories")
        return reader.sweep(actor=SWEEP_ACTOR).expired
    finally:
        reader.close()


class SharedSweep(QObject):
    """Started with a shared brain's session, stopped before it closes."""

    def __init__(self, runner: JobRunner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.session: BrainSession | None = None
        self.job: Job | None = None
        self.sweeps = 0  # sweeps that ended (a test waits for them)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.sweep_now)

    def start(self, session: BrainSession, interval_s: float) -> None:
        if session is self.session:
            return  # already sweeping it (the upkeep is asked again after writes)
        self.session = session
        self._timer.start(max(1, round(interval_s * 1000)))
        self.sweep_now()

    def stop(self) -> None:
        self._timer.stop()
        self.session = None

    def sweep_now(self) -> None:
        session = self.session
        if session is None or self.job is not None:
            return
        job = self.runner.start(SWEEP_JOB, lambda: _sweep(session), own_thread=True)
        self.job = job

        def ended(expired: int | None) -> None:
            self.job = None
            self.sweeps += 1
            if expired and session is self.session:
                session.bus.publish_external(Changes(kind="reset", actor=SWEEP_ACTOR))

        job.finished.connect(ended)
        job.failed.connect(lambda _exc: ended(None))  # logged by the runner; next interval
        job.cancelled.connect(lambda: ended(None))
