"""Embedding a shared brain's pending memories from the window, so search by meaning finds
them: what the upkeep thread does for a file (`core.maintenance.Maintainer`), done on a
shared brain by a job of the window's runner (`SharedBrain.backfill`, as `memgui embed`),
on a connection of its own, each batch one transaction (stopping keeps those written).

The window starts one when the Ollama check finds memories pending and Ollama answering
(`SemanticService.start_backfill`), one at a time; other machines' agents may embed the
same brain meanwhile: a vector is written only where its trace still holds the text
embedded, and the model pin is checked in each batch's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, cast

from memgui.core.model import Changes
from memgui.core.progress import Progress
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.shared_brain import SharedBrain
from memgui.ui.jobs import Job, JobRunner
from memgui.ui.session import BrainSession

BACKFILL_JOB = "embedding"  # a quiet job: closing never asks about it (a batch is kept)


def _backfill(
    session: BrainSession, make_embedder: Callable[[], OllamaEmbedder]
) -> Generator[Progress, None, Any]:
    reader = cast(SharedBrain, session.open_reader())
    session.note_own_connection(reader)  # it announces its rows itself (below)
    try:
        reader.use_embedder(make_embedder())  # made here: never on the GUI thread
        return (yield from reader.backfill())
    finally:
        reader.close()


def start_shared_backfill(
    runner: JobRunner,
    session: BrainSession,
    make_embedder: Callable[[], OllamaEmbedder],
    ended: Callable[[int | None, str], None],
    still_shown: Callable[[], bool],
) -> Job:
    """Embed `session`'s pending memories in a job; `ended(remaining, error)` follows on
    the GUI thread (remaining None when it did not finish). Rows it embedded are announced
    on the session's bus as the upkeep's are (a reset by the actor "embedding"), while the
    window still shows the session (`still_shown`): a job that ends after its brain was
    closed has no views left to refresh."""
    # On a thread of its own: closing the window never waits for an Ollama that holds a
    # batch (the job ends after it, on its own connection).
    job = runner.start(BACKFILL_JOB, lambda: _backfill(session, make_embedder), own_thread=True)

    def finished(report: Any) -> None:  # core.search.hybrid.BackfillReport
        if report.embedded and still_shown():
            session.bus.publish_external(Changes(kind="reset", actor="embedding"))
        ended(int(report.remaining), "")

    job.finished.connect(finished)
    job.failed.connect(lambda exc: ended(None, str(exc) or type(exc).__name__))
    job.cancelled.connect(lambda: ended(None, ""))
    return job
