"""Background upkeep of a brain file: the TTL sweep, the embedding backfill and the merging
of the full-text index's segments.

As agent-memory's servers do (upstream-notes §A.8): the first tick runs at start, then one
every `interval` seconds; each tick removes traces whose TTL passed (journaled under the
actor `sweep`, revertible) and embeds pending traces when Ollama answers. Between ticks,
`backfill_soon()` (called after a write) embeds what was just written, shortly after, so a
call never waits for Ollama: a burst of writes within `settle` seconds is one backfill, and
none is tried while Ollama is known to be down. A failure is logged (its detail goes to the
log only) and the next tick tries again. The work runs on a thread of its own with its own
connection, so it never holds up a call of the process that started it; SQLite's lock
serialises its short write transactions with everyone else's. Qt-free: the servers use it,
and the app can.

Whenever the brain changed (another connection committed), at most every `MERGE_CHECK_S`,
the thread reads memgui_fts's structure (one row) and merges its segments a small step at a
time (`search/fts_merge.py`): schema 6 took that work out of the writes (all but a
burst's small segments, `fts_merge.merge_inline`). With
`index_pending` (the app, whose connection indexes later), it first indexes the rows the
writers marked for the full-text indexes, a small batch at a time
(`search/background_index.py`): no write of the GUI thread runs that flush.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memgui.core.errors import EmbeddingUnavailable
from memgui.core.progress import Cancelled, Progress

if TYPE_CHECKING:
    from memgui.core.brain import Brain
    from memgui.core.search.background_index import Indexer
    from memgui.core.search.hybrid import Embedder

log = logging.getLogger("memgui.maintenance")

DEFAULT_INTERVAL_S = 300.0
DEFAULT_SETTLE_S = 0.25  # writes arriving within this are embedded together
VECTOR_RECHECK_S = 10.0  # while the brain has no vector: how often to look again
MERGE_CHECK_S = 0.25  # how often the index's segments are looked at, when the brain changed
MERGE_GAP_S = 0.03  # after a pass that left marked rows: the next one
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
        embedder_factory: Callable[[], Embedder | None] | None = None,
        interval: float = DEFAULT_INTERVAL_S,
        settle: float = DEFAULT_SETTLE_S,
        name: str = "memgui-maintenance",
        on_report: Callable[[TickReport], None] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        index_pending: bool = False,
    ) -> None:
        """`on_report` hears each tick's and backfill's report, `on_progress` each embedded
        batch; both are called on the maintenance thread (an app hands them on to its own)."""
        if not interval > 0:
            raise ValueError(f"interval must be positive (got {interval!r})")
        self.path = Path(path)
        self.brain_id = brain_id
        self.interval = interval
        self.settle = settle
        self._make_embedder = embedder_factory
        self._on_report = on_report
        self._on_progress = on_progress
        self._embedder: Embedder | None = None
        self._brain: Brain | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._tick_due = True  # the first tick runs at start
        self._backfill_due = False
        self._ticked = threading.Condition()
        self.ticks = 0
        self.backfills = 0
        self.last: TickReport | None = None
        # Whether the brain holds any vector (None: not known yet). Finding out reads every
        # trace when none has one, so it is done here, off the callers' path: a server
        # searches by keyword at once while this is False.
        self.has_vectors: bool | None = None
        self._vectors_seen_at: tuple[float, int] | None = None  # (when, data_version)
        self._last_error: str | None = None
        self.merge_passes = 0  # passes that looked at the index (each may merge nothing)
        self.merge_steps = 0  # merge steps that did work
        self._merged_at: int | None = None  # the data version the last pass saw
        self.index_pending = index_pending
        self.index_passes = 0  # passes that looked for marked rows (each may index none)
        self.indexed_rows = 0
        self._indexer: Indexer | None = None  # on the upkeep's connection
        self._indexed_at: int | None = None  # the data version the last complete pass saw
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    # --- control ---------------------------------------------------------------------------

    def start(self) -> Maintainer:
        self._thread.start()
        return self

    def poke(self) -> None:
        """Run the next tick now rather than at the end of the interval."""
        self._tick_due = True
        self._wake.set()

    def backfill_soon(self) -> None:
        """Embed pending traces shortly (after a write); cheap, never blocks."""
        self._backfill_due = True
        self._wake.set()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the batch in hand (a backfill stops between Ollama calls); wait for
        that at most `timeout` seconds (0: do not wait; the thread closes its connection
        when it ends)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and timeout > 0:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait_for_ticks(self, count: int, timeout: float) -> bool:
        """Block until `count` ticks have finished (for callers that need one done)."""
        with self._ticked:
            return self._ticked.wait_for(lambda: self.ticks >= count, timeout)

    def wait_for_backfills(self, count: int, timeout: float) -> bool:
        with self._ticked:
            return self._ticked.wait_for(lambda: self.backfills >= count, timeout)

    def wait_for_index_passes(self, count: int, timeout: float) -> bool:
        with self._ticked:
            return self._ticked.wait_for(lambda: self.index_passes >= count, timeout)

    def wait_for_merge_passes(self, count: int, timeout: float) -> bool:
        with self._ticked:
            return self._ticked.wait_for(lambda: self.merge_passes >= count, timeout)

    # --- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        next_tick = time.monotonic()
        try:
            while not self._stop.is_set():
                if self._tick_due or time.monotonic() >= next_tick:
                    self._tick_due = self._backfill_due = False
                    self._finished(self.tick(), tick=True)
                    next_tick = time.monotonic() + self.interval
                elif self._backfill_due:
                    # Let a burst of writes land, then embed them in one go.
                    self._stop.wait(self.settle)
                    self._backfill_due = False
                    self._finished(self._backfill_pass(), tick=False)
                else:
                    self._recheck_vectors()
                left = self._index_marked()
                self._merge_index()
                wait = min(next_tick - time.monotonic(), MERGE_CHECK_S)
                if left:  # the pass ran out of time or found the lock taken: again soon
                    wait = min(wait, MERGE_GAP_S)
                if self.has_vectors is False:
                    wait = min(wait, VECTOR_RECHECK_S)
                self._wake.wait(max(0.0, wait))
                self._wake.clear()
        finally:
            self._close_brain()

    def _finished(self, report: TickReport | None, tick: bool) -> None:
        with self._ticked:
            if tick:
                self.ticks += 1
            else:
                self.backfills += 1
            if report is not None:
                self.last = report
            self._ticked.notify_all()
        if report is not None and self._on_report is not None:
            self._tell(self._on_report, report)

    def _tell(self, listener: Callable[[Any], None], value: Any) -> None:
        try:
            listener(value)
        except Exception:  # a listener's fault never stops the upkeep
            log.warning("%s: a maintenance listener failed", self.path, exc_info=True)

    def tick(self) -> TickReport:
        """One round of upkeep; never raises (a failure is logged and reported)."""
        brain = self._open()
        if isinstance(brain, TickReport):
            return brain
        try:
            expired = brain.sweep(actor=SWEEP_ACTOR).expired  # no embedder set: expiry only
        except Exception as error:
            return self._failed("sweep expired memories", error)
        report = self._backfill_pass(expired)
        if expired:
            log.info("sweep: %d expired memories removed", expired)
        self._recheck_vectors(force=True)
        return report

    def _index_marked(self) -> bool:
        """Index the rows marked for the full-text indexes, when another connection wrote;
        whether some may still wait."""
        brain = self._brain
        if not self.index_pending or brain is None:
            return False
        from memgui.core.search import background_index

        try:
            version = brain.data_version()
            complete = True
            if version != self._indexed_at:
                if self._indexer is None or self._indexer.db is not brain.db:
                    self._indexer = background_index.Indexer(brain.db)
                before = self._indexer.indexed
                complete = self._indexer.index_pass(self._stop)
                indexed = self._indexer.indexed - before
                # Its own commits leave the version as it was (SQLite counts others' only).
                self._indexed_at = version if complete else None
            else:
                indexed = 0
        except Exception as error:
            self._failed("index marked rows", error)
            return False
        with self._ticked:
            self.index_passes += 1
            self.indexed_rows += indexed
            self._ticked.notify_all()
        return not complete

    def _merge_index(self) -> None:
        """Merge the full-text indexes' segments a step at a time, when another connection wrote."""
        brain = self._brain  # as the last tick left it: a brain that failed waits for one
        if brain is None:
            return
        from memgui.core.search import fts_merge

        try:
            version = brain.data_version()
            steps = 0
            if version != self._merged_at:
                steps = fts_merge.merge_pass(
                    brain.db, self._stop, fts_merge.MERGE_PAGES, budget_s=fts_merge.PASS_BUDGET_S
                )
                # Its own commits leave the version as it was (SQLite counts others' only).
                # A pass that merged until it ran out of time (or found the lock taken)
                # with merges still due goes on at the next look, not after the next write.
                if steps == 0 or not fts_merge.merge_due(brain.db):
                    self._merged_at = version
        except Exception as error:
            self._failed("merge the full-text index", error)
            return
        with self._ticked:
            self.merge_passes += 1
            self.merge_steps += steps
            self._ticked.notify_all()

    def _recheck_vectors(self, force: bool = False) -> None:
        """Look for vectors again while none was found, when another connection wrote."""
        if self.has_vectors:
            return
        brain = self._open()
        if isinstance(brain, TickReport):
            return
        try:
            version = brain.data_version()
            seen = self._vectors_seen_at
            recent = seen is not None and (
                version == seen[1] or time.monotonic() - seen[0] < VECTOR_RECHECK_S
            )
            if recent and not force:
                return
            self.has_vectors = brain.has_vectors()
            self._vectors_seen_at = (time.monotonic(), version)
        except Exception as error:
            self._failed("look for vectors", error)

    def _backfill_pass(self, expired: int = 0) -> TickReport:
        if self._make_embedder is None:
            return TickReport(expired=expired)
        if self._embedder is None:
            self._embedder = self._make_embedder()
        embedder = self._embedder
        known_down = getattr(embedder, "known_down", None)
        if embedder is None or (known_down is not None and known_down()):
            return TickReport(expired=expired, error=self._last_error)  # asked lately: down
        brain = self._open()
        if isinstance(brain, TickReport):
            return brain
        try:
            embedded, pending, why = self._backfill(brain, embedder)
        except Exception as error:
            return self._failed("embedding backfill", error, expired=expired)
        if embedded:
            self.has_vectors = True
            log.info("backfill: %d memories embedded, %s pending", embedded, pending)
        self._recovered(why)
        return TickReport(expired=expired, embedded=embedded, pending=pending, error=why)

    def _backfill(self, brain: Brain, embedder: Embedder) -> tuple[int, int | None, str | None]:
        from memgui.core.search.semantic import SemanticSearch

        job = SemanticSearch(embedder).backfill(brain)
        embedded = 0
        try:
            while True:
                if self._stop.is_set():
                    job.throw(Cancelled())
                progress = next(job)
                embedded = progress.done
                if self._on_progress is not None:
                    self._tell(self._on_progress, progress)
        except StopIteration as finished:
            return finished.value.embedded, finished.value.remaining, None
        except Cancelled:
            return embedded, None, None
        except EmbeddingUnavailable as down:  # Ollama down: normal, the next tick retries
            return embedded, None, str(down)

    def _open(self) -> Brain | TickReport:
        """The brain, opened once and kept (reopened after a failure)."""
        if self._brain is None:
            from memgui.core.brain import Brain

            try:
                self._brain = Brain.open(self.path, self.brain_id, actor=SWEEP_ACTOR, create=False)
            except Exception as error:
                return self._failed("open the brain", error)
        return self._brain

    def _close_brain(self) -> None:
        brain, self._brain = self._brain, None
        if brain is not None:
            try:
                brain.close()
            except Exception:
                log.warning("%s: closing the upkeep connection failed", self.path, exc_info=True)

    def _failed(self, step: str, error: BaseException, expired: int = 0) -> TickReport:
        message = f"{step} failed ({type(error).__name__}); retrying in {self.interval:g} s"
        log.warning("%s: %s", self.path, message, exc_info=error)
        self._last_error = message
        self._close_brain()  # the next try starts from a fresh connection
        return TickReport(expired=expired, error=message)

    def _recovered(self, why: str | None) -> None:
        """Say once when upkeep starts or stops waiting (for Ollama), not at every tick."""
        if why and not self._last_error:
            log.info("%s: the embedding backfill waits: %s", self.path, why)
        elif not why and self._last_error:
            log.info("%s: upkeep runs again", self.path)
        self._last_error = why
