"""Background upkeep of a brain file: the TTL sweep and the embedding backfill.

As agent-memory's servers do (upstream-notes §A.8): the first tick runs at start, then one
every `interval` seconds; each tick removes traces whose TTL passed (journaled under the
actor `sweep`, revertible) and embeds pending traces when Ollama answers. A failure is
logged (its detail goes to the log only) and the next tick tries again. The work runs on a
thread of its own with its own connection, so it never holds up a call of the process that
started it; SQLite's lock serialises its short write transactions with everyone else's.
Qt-free: the servers use it, and the app can.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgui.core.errors import EmbeddingUnavailable, MemguiError
from memgui.core.progress import Cancelled

log = logging.getLogger("memgui.maintenance")

DEFAULT_INTERVAL_S = 300.0
SWEEP_ACTOR = "sweep"


@dataclass(frozen=True)
class TickReport:
    expired: int = 0
    embedded: int = 0
    pending: int | None = None  # traces still waiting for a vector (None: not known)
    error: str | None = None  # why the tick stopped short (logged in full)


class Maintainer:
    """Runs `tick` on a thread: at start, then every `interval` seconds, until `stop`."""

    def __init__(
        self,
        path: str | Path,
        brain_id: str | None,
        *,
        embedder_factory: Callable[[], Any] | None = None,
        interval: float = DEFAULT_INTERVAL_S,
        name: str = "memgui-maintenance",
    ) -> None:
        if not interval > 0:
            raise ValueError(f"interval must be positive (got {interval!r})")
        self.path = Path(path)
        self.brain_id = brain_id
        self.interval = interval
        self._make_embedder = embedder_factory
        self._embedder: Any = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._ticked = threading.Condition()
        self.ticks = 0
        self.last: TickReport | None = None
        self._last_error: str | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    # --- control ---------------------------------------------------------------------------

    def start(self) -> Maintainer:
        self._thread.start()
        return self

    def poke(self) -> None:
        """Run the next tick now rather than at the end of the interval."""
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch in hand (a backfill stops between Ollama calls)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def wait_for_ticks(self, count: int, timeout: float) -> bool:
        """Block until `count` ticks have finished (for callers that need one done)."""
        with self._ticked:
            return self._ticked.wait_for(lambda: self.ticks >= count, timeout)

    # --- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            report = self.tick()
            with self._ticked:
                self.ticks += 1
                self.last = report
                self._ticked.notify_all()
            self._wake.wait(self.interval)
            self._wake.clear()

    def tick(self) -> TickReport:
        """One round of upkeep; never raises (a failure is logged and reported)."""
        from memgui.core.brain import Brain

        try:
            brain = Brain.open(self.path, self.brain_id, actor=SWEEP_ACTOR, create=False)
        except MemguiError as error:
            return self._failed("open the brain", error)
        except Exception as error:  # e.g. an apsw error on a damaged file
            return self._failed("open the brain", error)
        try:
            expired = brain.sweep(actor=SWEEP_ACTOR).expired  # no embedder set: expiry only
        except Exception as error:
            brain.close()
            return self._failed("sweep expired memories", error)
        try:
            embedded, pending, why = self._backfill(brain)
        except Exception as error:
            brain.close()
            return self._failed("embedding backfill", error, expired=expired)
        brain.close()
        if expired:
            log.info("sweep: %d expired memories removed", expired)
        if embedded:
            log.info("backfill: %d memories embedded, %s pending", embedded, pending)
        self._recovered(why)
        return TickReport(expired=expired, embedded=embedded, pending=pending, error=why)

    def _backfill(self, brain: Any) -> tuple[int, int | None, str | None]:
        if self._make_embedder is None:
            return 0, None, None
        pending = brain.embedding_info()["pending"]
        if not pending:
            return 0, pending, None
        if self._embedder is None:
            self._embedder = self._make_embedder()
        if self._embedder is None:
            return 0, pending, None
        from memgui.core.semantic import SemanticSearch

        job = SemanticSearch(self._embedder).backfill(brain)
        embedded = 0
        try:
            while True:
                if self._stop.is_set():
                    job.throw(Cancelled())
                progress = next(job)
                embedded = progress.done
        except StopIteration as finished:
            return finished.value.embedded, finished.value.remaining, None
        except Cancelled:
            return embedded, None, None
        except EmbeddingUnavailable as down:  # Ollama down: normal, the next tick retries
            return embedded, None, str(down)

    def _failed(self, step: str, error: BaseException, expired: int = 0) -> TickReport:
        message = f"{step} failed ({type(error).__name__}); retrying in {self.interval:g} s"
        log.warning("%s: %s", self.path, message, exc_info=error)
        self._last_error = message
        return TickReport(expired=expired, error=message)

    def _recovered(self, why: str | None) -> None:
        """Say once when upkeep starts or stops waiting (for Ollama), not at every tick."""
        if why and not self._last_error:
            log.info("%s: the embedding backfill waits: %s", self.path, why)
        elif not why and self._last_error:
            log.info("%s: upkeep runs again", self.path)
        self._last_error = why
