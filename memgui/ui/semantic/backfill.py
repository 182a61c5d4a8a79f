"""Search by meaning in the app: the embedder, the Ollama light and the background upkeep.

The app never embeds on the GUI thread and never while saving (`auto_embed` stays off): a
memory is stored pending, and the upkeep the servers run (`core.maintenance.Maintainer`, on a
thread and a connection of its own) embeds pending memories and removes those whose TTL
passed while the window is open: a first round when a brain opens, then one every
`interval` seconds (`maintenance/interval_s`, default 60), a failure logged and tried again
at the next round. Every `CHECK_INTERVAL_MS` a small job asks Ollama whether it answers and
has the model, and counts the pending memories; when Ollama answers and memories wait, the
upkeep embeds them at once. Stopping Ollama mid-backfill stops it between batches (those
written stay); the next check that finds Ollama back starts it again. Nothing here waits
for the upkeep: closing a brain asks it to stop and goes on.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from memgui.core.brain import Brain
from memgui.core.maintenance import SWEEP_ACTOR, Maintainer, TickReport
from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.core.search.embed import EmbedderStatus, OllamaEmbedder
from memgui.core.shared_brain import SharedBrain
from memgui.ui.dialogs.settings_dialog import SettingsDialog, ollama_config
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.semantic.ollama_status import OllamaStatusLight
from memgui.ui.semantic.shared_backfill import start_shared_backfill
from memgui.ui.semantic.shared_sweep import SWEEP_JOB, SharedSweep
from memgui.ui.session import BrainSession

if TYPE_CHECKING:
    from memgui.ui.main_window import MainWindow

CHECK_INTERVAL_MS = 30_000
AFTER_EDIT_MS = 2_000
STATUS_JOB = "ollama status"
INTERVAL_KEY = "maintenance/interval_s"
DEFAULT_INTERVAL_S = 60.0  # the TTL sweep and a backfill round: once a minute
MIN_INTERVAL_S, MAX_INTERVAL_S = 0.1, 86_400.0
READ_ONLY_REFUSAL = "the file is read-only: its memories cannot be embedded here"
# Jobs nobody needs to be asked about when the window closes.
BACKGROUND_JOBS = (STATUS_JOB, "similar", "counts", SWEEP_JOB)


def _status_job(
    make_embedder: Callable[[], OllamaEmbedder], open_reader: Callable[[], Brain]
) -> Generator[Progress, None, tuple[EmbedderStatus, int]]:
    yield Progress(0, None, "asking Ollama")
    status = make_embedder().status()
    reader = open_reader()
    try:
        pending = reader.embedding_info()["pending"]
    finally:
        reader.close()
    return status, pending


class SemanticService(QObject):
    """One per window: follows the open session, owns the embedder, the light and the
    upkeep thread."""

    status_changed = Signal(str, object)  # status, pending count (None when unknown)
    backfill_finished = Signal(object)  # core.maintenance.TickReport (a round with vectors)
    # The upkeep thread's news, handed to the GUI thread (queued to this object's slots).
    _upkeep_reported = Signal(object, object)  # (Maintainer, TickReport)
    _upkeep_progressed = Signal(object, object)  # (Maintainer, Progress)

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
        self.upkeep: Maintainer | None = None
        self.shared_backfill: Job | None = None  # a shared brain's embedding job
        self.shared_sweep = SharedSweep(runner, self)  # a shared brain's TTL sweep
        self.backfilling = False  # a backfill was asked for and has not reported yet
        self.refusal = ""  # why the backfill may not run with these settings
        self.settings_action: QAction | None = None  # Search settings… in the window's menu
        queued = Qt.ConnectionType.QueuedConnection
        self._upkeep_reported.connect(self._on_upkeep_report, queued)
        self._upkeep_progressed.connect(self._on_upkeep_progress, queued)
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
        self._start_upkeep()
        self._timer.start()
        self.check_now()

    def _on_changes(self, changes: Changes, _initiator: object) -> None:
        if changes.actor != "embedding":  # not the backfill's own announcement
            self._soon.start()
        if self.upkeep is None:
            self._start_upkeep()  # the first write migrated an AgentOS brain: upkeep now

    def detach(self) -> None:
        """Before the session closes: stop the timer and the upkeep (never waiting for it)."""
        self._timer.stop()
        self._soon.stop()
        self._stop_upkeep()
        self.session = None
        self._show("off", None)

    # --- the upkeep thread ----------------------------------------------------------------

    def interval_s(self) -> float:
        try:
            value = float(str(self.settings.value(INTERVAL_KEY, DEFAULT_INTERVAL_S)))
        except ValueError:  # a settings file edited by hand
            return DEFAULT_INTERVAL_S
        return value if MIN_INTERVAL_S <= value <= MAX_INTERVAL_S else DEFAULT_INTERVAL_S

    def _start_upkeep(self) -> None:
        session, embedder = self.session, self._embedder_maker()
        if session is None or session.read_only or self.upkeep is not None:
            return
        if session.shared:  # its sweep a job every interval; its backfill `_backfill_shared`
            self.shared_sweep.start(session, self.interval_s())
            return
        if session.migration_pending:
            return  # its sweep and vectors are writes: an AgentOS brain waits for the person
        upkeep: Maintainer | None = None

        def reported(report: TickReport) -> None:  # on the upkeep thread
            self._upkeep_reported.emit(upkeep, report)

        def progressed(progress: Progress) -> None:
            self._upkeep_progressed.emit(upkeep, progress)

        upkeep = Maintainer(
            session.path,
            session.brain_id,
            embedder_factory=None if self.refusal else embedder,
            interval=self.interval_s(),
            name="memgui-app-upkeep",
            on_report=reported,
            on_progress=progressed,
            index_pending=True,
        )
        self.upkeep = upkeep.start()
        # From now on no write or search of the GUI thread indexes: the upkeep does.
        session.brain.index_later(True)

    def _stop_upkeep(self) -> None:
        upkeep, self.upkeep = self.upkeep, None
        self.backfilling = False
        self.shared_sweep.stop()
        if upkeep is not None:
            upkeep.stop(timeout=0)  # it ends after the batch in hand, on its own
            if self.session is not None:  # nobody indexes for it now: its writes do again
                self.session.brain.index_later(False)

    def _on_upkeep_report(self, upkeep: Maintainer, report: TickReport) -> None:
        session = self.session
        if upkeep is not self.upkeep or session is None:
            return  # a report of a brain no longer open
        self.backfilling = False
        if report.expired:
            # Written on the upkeep's connection: the views read their rows again.
            session.bus.publish_external(Changes(kind="reset", actor=SWEEP_ACTOR))
        if report.pending is not None:
            self._show(self.status, report.pending)
        if report.embedded:
            session.bus.publish_external(Changes(kind="reset", actor="embedding"))
        if report.error and "failed (" in report.error:  # not Ollama away: the brain refused
            self._show(self.status, self.pending, f"Embedding stopped: {report.error}")
        self.backfill_finished.emit(report)

    def _on_upkeep_progress(self, upkeep: Maintainer, progress: Progress) -> None:
        if upkeep is self.upkeep and progress.total is not None:
            self._show(self.status, max(progress.total - progress.done, 0))

    def reader_factory(self, session: BrainSession) -> Callable[[], Brain]:
        """Opens second connections on `session`'s file that search by meaning (the table's
        query jobs). Only these get the embedder: the GUI thread's brain never waits on
        Ollama (a hung server would freeze the window for the client's timeout)."""

        def open_reader() -> Brain:
            reader = session.open_reader()
            config = self.config
            if config is not None and session.shared:
                cast(SharedBrain, reader).use_embedder(self.embedder_for(config))
            elif config is not None:
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
        """The URL or model changed: a new embedder, a new upkeep, and a fresh check."""
        self._stop_upkeep()
        self.refusal = READ_ONLY_REFUSAL if self.session and self.session.read_only else ""
        self._install_embedder()
        if self.session is not None:
            self._start_upkeep()
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
        if status == "reachable" and pending and not self.backfilling and not self.refusal:
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

    def start_backfill(self) -> bool:
        """Have the upkeep embed pending memories now (False: it is not running); on a
        shared brain, a job of the window does (`shared_backfill.py`)."""
        session = self.session
        if session is not None and session.shared:
            return self._backfill_shared(session)
        if self.upkeep is None or self.refusal:
            return False
        self.backfilling = True
        self.upkeep.backfill_soon()
        return True

    def _backfill_shared(self, session: BrainSession) -> bool:
        config = self.config
        if config is None or self.refusal or self.shared_backfill is not None:
            return False

        def ended(remaining: int | None, error: str) -> None:
            self.shared_backfill = None
            self.backfilling = False
            if session is not self.session:
                return  # embedded a brain that is no longer open
            if error:
                self._show(self.status, self.pending, f"Embedding stopped: {error}")
            elif remaining is not None:
                self._show(self.status, remaining)

        self.backfilling = True
        self.shared_backfill = start_shared_backfill(
            self.runner,
            session,
            lambda: self.embedder_for(config),
            ended,
            lambda: session is self.session,
        )
        return True

    def stop_jobs(self, timeout_s: float = 2.0) -> None:
        """Cancel the background reads and wait for them, so closing the window never asks
        about them; the upkeep is asked to stop (it ends after the batch in hand)."""
        for job in self.runner.active_jobs:
            if job.name not in BACKGROUND_JOBS:
                continue
            job.cancel()
            if job.wait(timeout_s):
                # Deliver the job's queued end now: the runner forgets it before the close.
                QCoreApplication.sendPostedEvents(job, 0)
        if self.upkeep is not None:
            self.upkeep.stop(timeout=0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Close and watched is self.parent():
            self.stop_jobs()
        return False

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
    menus = [m for m in window.window_actions.find.associatedObjects() if isinstance(m, QMenu)]
    if menus:
        menus[0].addAction(settings_action)
    else:
        window.menuBar().addAction(settings_action)
    service.settings_action = settings_action
    return service
