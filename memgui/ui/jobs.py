"""Long core work off the GUI thread.

A job is a core generator that yields `Progress` and returns its result. `JobRunner.start`
runs it in a `QRunnable` on a `QThreadPool`; the `Job` object reports back through signals
only (widgets are never touched from the worker). Cancel sets a flag the worker checks at
every yield; it then throws `Cancelled` into the generator so the core can roll back.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Generator
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot

from memgui.core.progress import Cancelled, Progress

JobFactory = Callable[[], Generator[Progress, None, Any]]
# How much lower than the GUI thread the workers run. On a busy 2-core machine a table paint
# (~30 ms of the GUI thread) shared a core with the app's own query job and took 60–190 ms;
# a worker ten steps nicer than the GUI thread gets ~10% of a core they both want.
WORKER_NICENESS = 10
_APP_NICENESS = os.getpriority(os.PRIO_PROCESS, 0) if hasattr(os, "getpriority") else 0


# A worker running Python keeps the GIL for a whole switch interval each time the GUI thread
# lets go of it (every Qt call of a paint does): at Python's default 5 ms, a 20,000-node
# layout's frames and the position store's writer stretched the GUI thread's stalls to
# 100–250 ms. The main window sets the same (main_window.GIL_SWITCH_INTERVAL_S).
GIL_SWITCH_INTERVAL_S = 0.001


def keep_gil_switches_short() -> None:
    """Have a worker holding the GIL hand it back to the GUI thread within 1 ms."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_INTERVAL_S))


def lower_thread_priority() -> None:
    """Run the calling worker thread WORKER_NICENESS steps nicer than the app. Only Linux
    keeps a niceness per thread (elsewhere the id could name a process): other systems, or
    a refusal, change nothing."""
    if sys.platform != "linux":
        return
    try:
        os.setpriority(
            os.PRIO_PROCESS, threading.get_native_id(), min(19, _APP_NICENESS + WORKER_NICENESS)
        )
    except (AttributeError, OSError):
        pass


class Job(QObject):
    """One running generator. Signals arrive in the thread that owns the job (the GUI)."""

    progress = Signal(object)  # Progress
    finished = Signal(object)  # the generator's return value
    failed = Signal(object)  # the exception it raised
    cancelled = Signal()
    # The worker emits these; they cross to the GUI thread through queued connections to
    # this object's own slots, which emit the public signals there. (A plain Python
    # callable connected straight to a signal emitted in a worker would run in the worker.)
    _worker_progress = Signal(object)
    _worker_finished = Signal(object)
    _worker_failed = Signal(object)
    _worker_cancelled = Signal()

    def __init__(self, name: str, factory: JobFactory, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._factory = factory
        self._cancel_requested = threading.Event()
        self._done = threading.Event()
        self.last_progress: Progress | None = None
        queued = Qt.ConnectionType.QueuedConnection
        self._worker_progress.connect(self._on_progress, queued)
        self._worker_finished.connect(self._on_finished, queued)
        self._worker_failed.connect(self._on_failed, queued)
        self._worker_cancelled.connect(self._on_cancelled, queued)

    def cancel(self) -> None:
        """Ask the job to stop at its next yield; `cancelled` follows."""
        self._cancel_requested.set()

    @property
    def cancel_requested(self) -> bool:
        return self._cancel_requested.is_set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the worker has left the generator (used when the window closes)."""
        return self._done.wait(timeout_s)

    @Slot(object)
    def _on_progress(self, event: Progress) -> None:
        self.last_progress = event
        self.progress.emit(event)

    @Slot(object)
    def _on_finished(self, result: Any) -> None:
        self.finished.emit(result)

    @Slot(object)
    def _on_failed(self, exc: BaseException) -> None:
        self.failed.emit(exc)

    @Slot()
    def _on_cancelled(self) -> None:
        self.cancelled.emit()

    def _run(self) -> None:
        """Body of the worker thread: drive the generator, report through signals."""
        # `done` is set before the outcome is signalled, so a slot that sees the signal
        # also sees the job as done.
        try:
            if self.cancel_requested:
                raise Cancelled()
            generator = self._factory()
            result = self._drive(generator)
        except Cancelled:
            self._done.set()
            self._worker_cancelled.emit()
        except Exception as exc:  # reported, not raised: a worker has nobody to raise to
            self._done.set()
            self._worker_failed.emit(exc)
        else:
            self._done.set()
            self._worker_finished.emit(result)
        finally:
            self._done.set()

    def _drive(self, generator: Generator[Progress, None, Any]) -> Any:
        while True:
            try:
                event = next(generator)
            except StopIteration as stop:
                return stop.value
            self._worker_progress.emit(event)
            if self.cancel_requested:
                # Let the core unwind inside its own transaction; if it swallows the
                # exception and goes on, close() stops it for good.
                try:
                    generator.throw(Cancelled())
                except StopIteration:
                    pass
                finally:
                    generator.close()
                raise Cancelled()


class _JobRunnable(QRunnable):
    def __init__(self, job: Job, nice: bool = True) -> None:
        super().__init__()
        self._job: Job | None = job
        self._nice = nice

    def run(self) -> None:
        if self._nice:
            lower_thread_priority()
        job, self._job = self._job, None
        if job is not None:
            # Not held from here: the pool may keep this runnable's wrapper a while after
            # it ran, and the job (with what its closures hold) must go when it is done.
            job._run()


def _run_on_own_thread(job: Job, nice: bool = True) -> None:
    if nice:
        lower_thread_priority()
    job._run()


class JobRunner(QObject):
    """Starts jobs, keeps them alive while they run, cancels them all on shutdown."""

    job_started = Signal(object)  # Job
    job_ended = Signal(object)  # Job (finished, failed or cancelled)

    def __init__(
        self, parent: QObject | None = None, max_threads: int = 2, nice: bool = True
    ) -> None:
        """`nice=False`: the workers keep the app's priority, for short jobs a person waits
        on with the mouse still (the graph view's answer to a click must paint in 150 ms;
        a niced worker on a busy machine took seconds)."""
        super().__init__(parent)
        self._nice = nice
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._jobs: list[Job] = []
        self._plain: QThreadPool | None = None  # jobs at the app's priority (`start`)
        self._max_threads = max_threads

    @property
    def active_jobs(self) -> list[Job]:
        return list(self._jobs)

    def start(
        self, name: str, factory: JobFactory, own_thread: bool = False, nice: bool | None = None
    ) -> Job:
        """Run `factory()`'s generator in the pool; connect to the returned job's signals.

        `own_thread`: on a thread of its own instead, for a job its caller may stop waiting
        for (a plan cancelled while its reader is inside one slow read): it never holds one
        of the pool's threads, and closing the app does not wait for it.

        `nice=False` runs this job at the app's priority even in a niced runner: a job that
        runs Python most of its time holds the GIL whenever the system preempts it, and a
        worker ten steps nicer waits ~10 times longer for its core back — all that while
        the GUI thread waits for the GIL (40–100 ms on a busy machine, docs/performance.md).
        A pool thread once niced cannot be made less nice without privileges, so such a job
        runs in a second pool whose threads are never niced (a pool, not a new thread: the
        GUI thread would wait, on a busy machine, for that thread to be scheduled and say it
        started), which `shutdown` waits for as for the first.
        """
        nice = self._nice and nice is not False  # a job is never nicer than its runner
        # A job has no Qt parent: Python frees it (see `_release`). The runner is held
        # weakly, so the job's closures never keep a runner alive.
        job = Job(name, factory)
        runner = weakref.ref(self)

        def forget(*_value: object, j: Job = job) -> None:
            alive = runner()
            if alive is not None:
                alive._forget(j)

        for signal in (job.finished, job.failed, job.cancelled):
            signal.connect(forget)
        self._jobs.append(job)
        if own_thread:
            thread = threading.Thread(
                target=_run_on_own_thread, args=(job, nice), name=f"job {name}", daemon=True
            )
            thread.start()
        elif self._nice and not nice:
            self._plain_pool().start(_JobRunnable(job, nice=False))
        else:
            self._pool.start(_JobRunnable(job, nice))
        self.job_started.emit(job)
        return job

    def cancel_all(self) -> None:
        for job in self._jobs:
            job.cancel()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel every job and wait for the workers; True when all of them stopped."""
        self.cancel_all()
        deadline = time.monotonic() + timeout_ms / 1000
        done = self._plain is None or self._plain.waitForDone(timeout_ms)
        left_ms = max(0, int((deadline - time.monotonic()) * 1000))
        return self._pool.waitForDone(left_ms) and done

    def _plain_pool(self) -> QThreadPool:
        if self._plain is None:
            self._plain = QThreadPool(self)
            self._plain.setMaxThreadCount(self._max_threads)
        return self._plain

    def _forget(self, job: Job) -> None:
        if job in self._jobs:
            self._jobs.remove(job)
            self.job_ended.emit(job)
            # Once its other slots have run (this one was connected first), its closures go
            # with whatever they hold (a closed brain's session, a model's id list), and the
            # job with its last reference. Not `deleteLater` on a child of the runner: the
            # closures freed by the delete could free the runner, which deleted the job again.
            QTimer.singleShot(0, partial(_release, job))


def _release(job: Job) -> None:
    """Drop what is connected to a finished job; Python frees it with its last reference
    (a caller may still hold it, to read `done`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a signal nobody connected to
        for signal in (job.progress, job.finished, job.failed, job.cancelled):
            try:
                signal.disconnect()
            except (RuntimeError, TypeError):
                pass
