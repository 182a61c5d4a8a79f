"""Search by meaning in the app: the embedder, the Ollama light and the background backfill.

The app never embeds on the GUI thread and never while saving (`auto_embed` stays off): a
memory is stored pending, and a backfill job embeds pending memories on a connection of its
own while the window is open. Every `CHECK_INTERVAL_MS` a small job asks Ollama whether it
answers and has the model, and counts the pending memories; when Ollama answers and memories
wait, the backfill starts. Stopping Ollama mid-backfill stops the job (the batches already
written stay); the next check that finds Ollama back starts it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from memgui.core.brain import Brain
from memgui.core.errors import EmbeddingUnavailable
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.core.search.embed import OllamaEmbedder
from memgui.ui.dialogs.settings_dialog import SettingsDialog, ollama_config
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.semantic.ollama_status import OllamaStatusLight

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow
    from memgui.ui.session import BrainSession

CHECK_INTERVAL_MS = 30_000
AFTER_EDIT_MS = 2_000
STATUS_JOB = "ollama status"
BACKFILL_JOB = "embedding"
READ_ONLY_REFUSAL = "the file is read-only: its memories cannot be embedded here"
# Jobs nobody needs to be asked about when the window closes.
BACKGROUND_JOBS = (STATUS_JOB, BACKFILL_JOB, "similar", "counts")


def _status_job(make_embedder: Callable[[], OllamaEmbedder], open_reader):
    yield Progress(0, None, "asking Ollama")
    status = make_embedder().status()
    reader = open_reader()
    try:
        pending = reader.embedding_info()["pending"]
    finally:
        reader.close()
    return status, pending


def _backfill_job(make_embedder: Callable[[], OllamaEmbedder], open_reader):
    reader = open_reader()
    try:
        reader.use_embedder(make_embedder())
        # Each batch commits on its own; a cancel at a yield keeps what was written.
        return (yield from reader.semantic.backfill(reader))
    finally:
        reader.close()


class SemanticService(QObject):
    """One per window: follows the open session, owns the embedder and the light."""

    status_changed = Signal(str, object)  # status, pending count (None when unknown)
    backfill_finished = Signal(object)  # hybrid.BackfillReport

    def __init__(self, runner: JobRunner, settings: QSettings, parent: QObject | None = None):
        super().__init__(parent)
        self.runner = runner
        self.settings = settings
        self.light = OllamaStatusLight()
        self.session: BrainSession | None = None
        # The Ollama (url, model) in use. Its client is made in a worker on first use:
        # making one (an SSL context) took 50–120 ms of the GUI thread when a brain opened.
        self.config: tuple[str, str] | None = None
        self._embedder: OllamaEmbedder | None = None
        self._embedder_lock = threading.Lock()
        self.status = "off"
        self.pending: int | None = None
        self.status_job: Job | None = None
        self.backfill_job: Job | None = None
        self.refusal = ""  # why the backfill may not run with these settings
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_INTERVAL_MS)
        self._timer.timeout.connect(self.check_now)
        # A save leaves the memory pending: look again soon after edits, not in 30 s.
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(AFTER_EDIT_MS)
        self._soon.timeout.connect(self.check_now)

    # --- the session ----------------------------------------------------------------------

    def attach(self, session: BrainSession) -> None:
        """Give `session`'s brain the embedder from the settings and start watching Ollama."""
        self.session = session
        self.refusal = READ_ONLY_REFUSAL if session.read_only else ""
        self._install_embedder()
        self._show("checking", None)
        session.bus.changed.connect(self._on_changes)
        self._timer.start()
        self.check_now()

    def _on_changes(self, changes: Changes, _initiator: object) -> None:
        if changes.actor != "embedding":  # not the backfill's own announcement
            self._soon.start()

    def detach(self) -> None:
        """Before the session closes: stop the timer and cancel the backfill."""
        self._timer.stop()
        self._soon.stop()
        self.cancel_backfill()
        self.session = None
        self._show("off", None)

    def reader_factory(self, session: BrainSession) -> Callable[[], Brain]:
        """Opens second connections on `session`'s file that search by meaning (the table's
        query jobs). Only these get the embedder: the GUI thread's brain never waits on
        Ollama (a hung server would freeze the window for the client's timeout)."""

        def open_reader() -> Brain:
            reader = session.open_reader()
            config = self.config
            if config is not None:
                reader.use_embedder(self.embedder_for(config), auto_embed=False)
            return reader

        return open_reader

    def _install_embedder(self) -> None:
        self.config = ollama_config(self.settings)

    def embedder_for(self, config: tuple[str, str]) -> OllamaEmbedder:
        """The client for `config` (url, model), made on first use; called from workers."""
        with self._embedder_lock:
            embedder = self._embedder
            if embedder is None or (embedder.url, embedder.model) != config:
                embedder = self._embedder = OllamaEmbedder(*config)
            return embedder

    def _embedder_maker(self) -> Callable[[], OllamaEmbedder] | None:
        config = self.config
        return None if config is None else lambda: self.embedder_for(config)

    def apply_settings(self) -> None:
        """The URL or model changed: a new embedder, and a fresh check."""
        self.cancel_backfill()
        self.refusal = READ_ONLY_REFUSAL if self.session and self.session.read_only else ""
        self._install_embedder()
        if self.session is not None:
            self._show("checking", self.pending)
            self.check_now()

    # --- checking Ollama ------------------------------------------------------------------

    def check_now(self) -> Job | None:
        """Ask Ollama and count pending memories in the background (one check at a time)."""
        session, embedder = self.session, self._embedder_maker()
        if session is None or embedder is None or self.status_job is not None:
            return None
        job = self.runner.start(STATUS_JOB, lambda: _status_job(embedder, session.open_reader))
        self.status_job = job
        job.finished.connect(lambda result: self._on_status(job, session, result))
        job.failed.connect(lambda exc: self._on_status_failed(job, session, exc))
        job.cancelled.connect(lambda: self._clear_status_job(job))
        return job

    def _clear_status_job(self, job: Job) -> None:
        if self.status_job is job:
            self.status_job = None

    def _on_status(self, job: Job, session: BrainSession, result: tuple[str, int | None]) -> None:
        self._clear_status_job(job)
        if session is not self.session:
            return  # asked for a brain that is no longer open
        status, pending = result
        self._show(status, pending)
        if status == "reachable" and pending and self.backfill_job is None and not self.refusal:
            self.start_backfill()

    def _on_status_failed(self, job: Job, session: BrainSession, exc: BaseException) -> None:
        self._clear_status_job(job)
        if session is self.session:
            self._show("down", self.pending, str(exc))

    def _show(self, status: str, pending: int | None, detail: str = "") -> None:
        self.status, self.pending = status, pending
        detail = detail or self.refusal
        if not detail and self.config is not None and status != "off":
            detail = "Ollama at {}, model {}".format(*self.config)
        self.light.show_status(status, pending, detail)
        self.status_changed.emit(status, pending)

    def why_no_meaning(self) -> str:
        """Why a search by meaning fell back to words, and what to do about it."""
        url, model = self.config or ("", "")
        if self.status == "down":
            return (
                f"Search by meaning could not run: Ollama does not answer at {url}. "
                "Start it (`ollama serve`) or set its URL"
            )
        if self.status == "model missing":
            return (
                f"Search by meaning could not run: Ollama has no model {model}. "
                f"Run `ollama pull {model}`, or choose another model"
            )
        if self.status == "checking":
            return "Search by meaning could not run yet: Ollama has not answered"
        waiting = f" ({self.pending} waiting)" if self.pending else ""
        how = self.refusal or "they are embedded in the background while Ollama answers"
        return f"Search by meaning could not run: no memory has a vector yet; {how}{waiting}"

    # --- the backfill ---------------------------------------------------------------------

    def start_backfill(self) -> Job | None:
        """Embed pending memories in the background (cancellable; one at a time)."""
        session, embedder = self.session, self._embedder_maker()
        if session is None or embedder is None or self.backfill_job is not None:
            return None
        if session.migration_pending:
            return None  # a vector is a write: an older brain waits for the person's word
        job = self.runner.start(BACKFILL_JOB, lambda: _backfill_job(embedder, session.open_reader))
        self.backfill_job = job
        job.progress.connect(lambda event: self._on_backfill_progress(session, event))
        job.finished.connect(lambda report: self._on_backfill_done(job, session, report))
        job.failed.connect(lambda exc: self._on_backfill_failed(job, session, exc))
        job.cancelled.connect(lambda: self._clear_backfill_job(job))
        return job

    def cancel_backfill(self) -> None:
        if self.backfill_job is not None:
            self.backfill_job.cancel()

    def stop_jobs(self, timeout_s: float = 2.0) -> None:
        """Cancel the background reads and the backfill and wait for them, so closing the
        window never asks about them (a batch in flight finishes or is dropped whole)."""
        for job in self.runner.active_jobs:
            if job.name not in BACKGROUND_JOBS:
                continue
            job.cancel()
            if job.wait(timeout_s):
                # Deliver the job's queued end now: the runner forgets it before the close.
                QCoreApplication.sendPostedEvents(job, 0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close and watched is self.parent():
            self.stop_jobs()
        return False

    def _clear_backfill_job(self, job: Job) -> None:
        if self.backfill_job is job:
            self.backfill_job = None

    def _on_backfill_progress(self, session: BrainSession, event: Progress) -> None:
        if session is self.session and event.total is not None:
            self._show(self.status, max(event.total - event.done, 0))

    def _on_backfill_done(self, job: Job, session: BrainSession, report: Any) -> None:
        self._clear_backfill_job(job)
        if session is not self.session:
            return
        self._show(self.status, report.remaining)
        if report.embedded:
            # Written on another connection: tell the views to read the rows again.
            session.bus.publish_external(Changes(kind="reset", actor="embedding"))
        self.backfill_finished.emit(report)

    def _on_backfill_failed(self, job: Job, session: BrainSession, exc: BaseException) -> None:
        self._clear_backfill_job(job)
        if session is not self.session:
            return
        if isinstance(exc, EmbeddingUnavailable):
            # Ollama went away mid-way: the batches written stay; the next check retries.
            self._show("down", self.pending, str(exc))
            return
        # The model does not match the brain's vectors (only a re-embed fixes that) or the
        # job broke: say why and do not start again until the settings change.
        self.refusal = str(exc)
        self._show(self.status, self.pending, f"Embedding stopped: {exc}")

    # --- settings -------------------------------------------------------------------------

    def edit_settings(self, parent: Any = None) -> bool:
        dialog = SettingsDialog(self.settings, parent, runner=self.runner)
        if dialog.exec() != SettingsDialog.DialogCode.Accepted:
            return False
        self.apply_settings()
        return True


def install_semantic(window: MainWindow) -> SemanticService:
    """Add the Ollama light to the status bar and Search settings… to the Edit menu."""
    service = SemanticService(window.runner, window.settings, window)
    window.installEventFilter(service)  # runs before the close question about running jobs
    window.statusBar().addPermanentWidget(service.light)
    settings_action = QAction("Searc&h settings…", window)  # S is Save's
    settings_action.setStatusTip("The Ollama URL and embedding model for search by meaning")
    settings_action.triggered.connect(lambda: service.edit_settings(window))
    service.light.clicked.connect(settings_action.trigger)
    menus = [m for m in window.actions.find.associatedObjects() if isinstance(m, QMenu)]
    if menus:
        menus[0].addAction(settings_action)
    else:
        window.menuBar().addAction(settings_action)
    window.search_settings_action = settings_action
    return service
