"""What both servers share: the brain they serve, the tool calls, errors and upkeep.

A `ToolService` holds one brain (opened once, with the embedder that embeds each write as
it lands), one tool profile and one worker thread: every call runs on that thread, one at a
time, so the connection is never used by two threads at once and the event loop stays free
for the protocol. `failure` sorts what a call raised into what a client may be told; the
detail of anything else (SQLite's words, a traceback) goes to the log only.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memgui.core.errors import (
    BrainFileLost,
    Conflict,
    InvalidArgument,
    MemguiError,
    NotFound,
    NotOnPostgres,
    ReadOnlyBrain,
    StorageError,
)
from memgui.core.maintenance import DEFAULT_INTERVAL_S, SWEEP_ACTOR, Maintainer
from memgui.core.progress import Job
from memgui.core.tools import ParameterError, Profile, ToolContext, ToolResult, call, profile

log = logging.getLogger("memgui.server")

# agent-memory's variables, read when memgui's own option and variable are not given.
AGENT_MEMORY_DB_ENV = "AGENT_MEMORY_DB"
AGENT_MEMORY_OLLAMA_ENV = "AGENT_MEMORY_OLLAMA_URL"
MEMGUI_BRAIN_ENV = "MEMGUI_BRAIN"
MEMGUI_OLLAMA_ENV = "MEMGUI_OLLAMA_URL"
TIMINGS_ENV = "MEMGUI_SERVER_TIMINGS"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def brain_path_from(option: str | None, default: Path) -> Path:
    """`--brain`, else `$MEMGUI_BRAIN`, else `$AGENT_MEMORY_DB`, else memgui's default."""
    for candidate in (
        option,
        os.environ.get(MEMGUI_BRAIN_ENV),
        os.environ.get(AGENT_MEMORY_DB_ENV),
    ):
        if candidate:
            return Path(candidate).expanduser()
    return default


def ollama_url_from(option: str | None) -> str | None:
    """`--ollama-url`, else `$MEMGUI_OLLAMA_URL`, else `$AGENT_MEMORY_OLLAMA_URL`."""
    for candidate in (
        option,
        os.environ.get(MEMGUI_OLLAMA_ENV),
        os.environ.get(AGENT_MEMORY_OLLAMA_ENV),
    ):
        if candidate and candidate.strip():
            return candidate.strip()
    return None  # the embedder's own default


def log_to_stderr(level: int = logging.INFO) -> None:
    """Server logs go to stderr (stdout may be the protocol) as well as the log file."""
    logger = logging.getLogger("memgui")
    if not any(getattr(h, "_memgui_stderr", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
        handler._memgui_stderr = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(level)


def quiet_collector() -> None:
    """Keep the garbage collector out of the calls: what start-up made (modules, schemas) is
    frozen out of every collection, and young objects are collected 100x less often. A
    protocol layer allocates thousands of short-lived objects per call, and a generation-0
    collection during a call cost ~0.1 ms of a ~0.2 ms store (docs/performance.md)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(100_000, 50, 50)


@dataclass(frozen=True)
class ServerOptions:
    brain_path: Path
    brain_id: str | None
    ollama_url: str | None
    embed_model: str
    profile: str = "agent-memory"
    rehydrate: bool = False
    maintenance_interval: float = DEFAULT_INTERVAL_S
    chat_model: str | None = None  # memory_reflect's derive step (default: core.llm's)
    # A shared brain's address (postgresql://…?brain_id=…), served instead of `brain_path`.
    brain_address: str | None = None


class ToolService:
    """One brain, one profile, one worker thread: what a server's handlers call."""

    def __init__(self, options: ServerOptions, actor: str) -> None:
        from memgui.core.brain import Brain
        from memgui.core.shared_brain import SharedBrain

        self.options = options
        self.profile: Profile = profile(options.profile, rehydrate=options.rehydrate)
        self.embedder = self._embedder()
        self.brain: Brain | SharedBrain
        # The upkeep (TTL sweeps, embedding backfill) of a brain file. A shared brain's
        # writes are embedded on the worker after the answer (`_embed_pending`), and its TTL
        # sweep runs on the worker every interval (`_sweep_shared`), as a file's maintainer
        # does both behind the calls.
        self.maintainer: Maintainer | None = None
        self._closing = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._pending_embeds: Job[Any] | None = None  # a shared brain's backfill under way
        self._embed_again = False  # a write landed while it ran: look once more after it
        if options.brain_address is not None:
            shared = SharedBrain.open(options.brain_address, options.brain_id, actor=actor)
            shared.use_embedder(self.embedder)  # search by meaning with the file's embedder
            self.brain, self.where = shared, str(shared.address)  # never its password
        else:
            brain = Brain.open(options.brain_path, options.brain_id, actor=actor)
            # Writes are embedded behind the call (`Maintainer.backfill_soon`): a store never
            # waits for Ollama, up or down; searches still rank by meaning once vectors exist.
            brain.use_embedder(self.embedder, auto_embed=False)
            self.brain, self.where = brain, str(brain.path)
            self.maintainer = Maintainer(
                brain.path,
                brain.brain_id,
                embedder_factory=self._embedder,
                interval=options.maintenance_interval,
            )
        from memgui.core.llm import OllamaChat

        self.chat = OllamaChat(options.ollama_url, options.chat_model)  # contacted when used
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memgui-tools")
        # Benchmarks measure the time a call spends in the server: `$MEMGUI_SERVER_TIMINGS`
        # names a file that gets each tool's call durations (seconds) as JSON at close.
        self._timings_file = os.environ.get(TIMINGS_ENV)
        self._timings: dict[str, list[float]] | None = {} if self._timings_file else None

    def _embedder(self) -> Any:
        from memgui.core.search.embed import OllamaEmbedder

        return OllamaEmbedder(self.options.ollama_url, model=self.options.embed_model)

    def start(self) -> ToolService:
        if self.maintainer is not None:
            self.maintainer.start()
        else:  # a shared brain: what waits for a vector is embedded now, as a file's upkeep does
            self._queue_embeds()
            self._sweeper = threading.Thread(
                target=self._sweep_every_interval, name="memgui-shared-sweep", daemon=True
            )
            self._sweeper.start()
        return self

    def _sweep_every_interval(self) -> None:
        """A shared brain's TTL sweep: at start, then every interval, on the worker (between
        the calls, on the brain's one connection) until the service closes."""
        while not self._closing.is_set():
            try:
                self._worker.submit(self._sweep_shared)
            except RuntimeError:  # closing
                return
            self._closing.wait(self.options.maintenance_interval)

    def _sweep_shared(self) -> None:
        try:
            expired = self.brain.sweep(actor=SWEEP_ACTOR).expired
        except Exception as error:  # logged; the next interval tries again
            log.warning("sweeping the shared brain's expired memories failed: %s", error)
            return
        if expired:
            log.info("sweep: %d expired memories removed", expired)

    def _queue_embeds(self) -> None:
        try:
            self._worker.submit(self._embed_pending)
        except RuntimeError:  # closing: the traces stay pending for the next server or `embed`
            pass

    def _embed_pending(self) -> None:
        """On the worker: one batch of a shared brain's backfill, then the next batch queued
        behind the calls waiting, so a long backfill never holds a call up for more than a
        batch. Ollama down or another model pinned: logged, the traces stay pending."""
        from memgui.core.shared_brain import SharedBrain

        brain = self.brain
        if not isinstance(brain, SharedBrain) or self.embedder.known_down():
            self._pending_embeds, self._embed_again = None, False  # the next write tries again
            return
        try:
            if self._pending_embeds is None:
                self._pending_embeds = brain.backfill()
            next(self._pending_embeds)
        except StopIteration:
            self._pending_embeds = None
            if self._embed_again:  # the job's cursor may have passed a trace written since
                self._embed_again = False
                self._queue_embeds()
            return
        except Exception as error:  # best effort: a store never fails for its vector
            self._pending_embeds, self._embed_again = None, False
            log.warning("embedding the shared brain's new memories failed: %s", error)
            return
        self._queue_embeds()

    def call_now(
        self, name: object, arguments: object, actor: str, defer: bool = False
    ) -> ToolResult:
        """Run a tool in this thread (the worker, or a caller that owns the service); with
        `defer`, its bookkeeping (`ToolResult.after`) is left to the caller."""
        start = time.perf_counter()
        # No vector in the brain, or Ollama failed a moment ago: search by keyword at once,
        # as agent-memory falls back, without asking again on every call.
        down = self.embedder.known_down() or (
            self.maintainer is not None and self.maintainer.has_vectors is False
        )
        ctx = ToolContext(self.brain, actor, "keyword" if down else "auto", llm=self.chat)
        try:
            result = call(ctx, self.profile, name, arguments, defer=defer)
        finally:
            if self._timings is not None:
                self._timings.setdefault(str(name), []).append(time.perf_counter() - start)
        changed = result.changes
        wrote_text = changed is not None and bool(changed.added or changed.edited)
        if wrote_text:  # a trace's text may wait for its vector
            if self.maintainer is not None:
                self.maintainer.backfill_soon()
            elif self._pending_embeds is None:
                self._queue_embeds()
            else:
                self._embed_again = True
        return result

    async def call(self, name: object, arguments: object, actor: str) -> ToolResult:
        """Run a tool on the worker; its bookkeeping runs there next, after the answer."""
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(
            self._worker, self.call_now, name, arguments, actor, True
        )
        if result.after is not None:
            self._worker.submit(self._bookkeeping, result.after)
        return result

    @staticmethod
    def _bookkeeping(work: Any) -> None:
        try:
            work()
        except Exception:  # a recall not noted never fails the search that answered
            log.warning("noting a search's recalls failed", exc_info=True)

    async def embedder_status(self) -> str:
        """`ready`, `model_missing` or `unreachable`, as agent-memory's /health says."""
        loop = asyncio.get_running_loop()
        status = await loop.run_in_executor(None, self.embedder.status)
        return {"reachable": "ready", "model missing": "model_missing"}.get(status, "unreachable")

    async def storage_check(self) -> None:
        """A one-row read through the worker: raises what a broken brain raises."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._worker, lambda: self.brain.list_traces(limit=1))

    def close(self) -> None:
        if self.maintainer is not None:
            self.maintainer.stop()
        self._closing.set()
        if self._sweeper is not None:
            self._sweeper.join()  # it queues nothing more: the worker's queue is final
        self._worker.shutdown(wait=True)
        self.brain.close()
        if self._timings_file and self._timings is not None:
            Path(self._timings_file).write_text(json.dumps(self._timings), encoding="utf-8")
        for client in (self.embedder, self.chat):
            close = getattr(client, "close", None)
            if close is not None:
                close()


# --- what a client may be told ---------------------------------------------------------------

PARAMS, INVALID, CONFLICT, NOT_FOUND, UNAVAILABLE, UNSUPPORTED, INTERNAL = (
    "params", "invalid", "conflict", "not_found", "unavailable", "unsupported", "internal",
)  # fmt: skip


def failure(error: BaseException, operation: str) -> tuple[str, str]:
    """(kind, message) for an error a call raised; the message is safe to send.

    Refusals (`InvalidArgument`, a stale compare-and-set) keep the core's own message,
    which names the field, bound and value. A storage failure or anything unexpected is
    `<operation> failed due to a storage error (details are in the server log)`, and the
    detail goes to the log only.
    """
    if isinstance(error, ParameterError):
        return PARAMS, str(error)
    if isinstance(error, InvalidArgument):
        return INVALID, str(error)
    if isinstance(error, Conflict):
        return CONFLICT, str(error)
    if isinstance(error, NotFound):
        return NOT_FOUND, str(error)
    if isinstance(error, ReadOnlyBrain | BrainFileLost):
        return UNAVAILABLE, str(error)
    if isinstance(error, NotOnPostgres):  # a tool a shared brain does not serve yet
        return UNSUPPORTED, str(error)
    if isinstance(error, MemguiError) and not isinstance(error, StorageError):
        log.warning("%s: %s", operation, error)
        return INTERNAL, f"{operation} failed: {error}"
    log.error("%s failed", operation, exc_info=error)
    return INTERNAL, f"{operation} failed due to a storage error (details are in the server log)"


def operation_of(tool_name: object) -> str:
    """The operation a message names: agent-memory's word for each tool."""
    words = {
        "memory_store": "store",
        "memory_add": "store",
        "memory_search": "search",
        "memory_list": "list",
        "memory_update": "update",
        "memory_link": "link",
        "memory_unlink": "unlink",
        "memory_forget": "forget",
        "memory_delete": "forget",
        "memory_merge": "merge",
        "rehydrate_memory": "rehydrate",
        "memory_reflect": "reflect",
    }
    return words.get(tool_name, "call") if isinstance(tool_name, str) else "call"
