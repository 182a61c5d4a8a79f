"""The background upkeep the servers run: TTL sweep and embedding backfill on a thread.

The first tick runs at start; a failure is logged and the next tick tries again; a tick
never raises. Ticks are waited for (`wait_for_ticks`), never slept for.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.maintenance import Maintainer
from memgui.core.search.embed import OllamaEmbedder

WAIT_S = 60.0  # generous: ticks are quick, a loaded machine is not


def embedder_for(url: str):  # noqa: ANN201
    # No grace period after a failure: the next tick asks Ollama again.
    return lambda: OllamaEmbedder(url, retry_after=0.0)


def test_the_first_tick_at_start_sweeps_and_backfills(brain_path: Path, ollama_server) -> None:
    with Brain.open(brain_path, actor="cli") as brain:
        brain.clock = lambda: 1_000  # long ago: its TTL has passed by now
        expired = brain.add("a reminder for long ago", ttl_secs=60).id
        brain.clock = Brain(brain.db, brain.brain_id, "cli").clock
        pending = brain.add("The car broke down").id
    maintainer = Maintainer(
        brain_path, None, embedder_factory=embedder_for(ollama_server.url), interval=3600
    ).start()
    try:
        assert maintainer.wait_for_ticks(1, WAIT_S)
        assert maintainer.last is not None
        assert (maintainer.last.expired, maintainer.last.embedded) == (1, 1)
        assert maintainer.last.pending == 0 and maintainer.last.error is None
        assert maintainer.has_vectors is True  # a server may search by meaning now
    finally:
        maintainer.stop()
    with Brain.open(brain_path) as brain:
        assert brain.get_many([expired]) == {}
        [entry] = [e for e in brain.journal_since(0) if e.trace_id == expired and e.op == "expire"]
        assert entry.actor == "sweep"  # revertible, and the app sees who removed it
        assert brain.get(pending).embedding_status == 1


def test_ollama_down_is_retried_at_the_next_tick(
    brain_path: Path, ollama_server, caplog: pytest.LogCaptureFixture
) -> None:
    with Brain.open(brain_path) as brain:
        trace_id = brain.add("written while Ollama was down").id
    ollama_server.stop()
    caplog.set_level(logging.INFO, logger="memgui.maintenance")
    maintainer = Maintainer(
        brain_path, None, embedder_factory=embedder_for(ollama_server.url), interval=3600
    ).start()
    try:
        assert maintainer.wait_for_ticks(1, WAIT_S)
        assert maintainer.last is not None and maintainer.last.embedded == 0
        assert "not reachable" in (maintainer.last.error or "")
        assert maintainer.has_vectors is False  # a server searches by keyword at once
        assert "backfill waits" in caplog.text
        ollama_server.start()
        maintainer.poke()
        assert maintainer.wait_for_ticks(2, WAIT_S)
        assert maintainer.last.embedded == 1 and maintainer.last.error is None
        assert maintainer.has_vectors is True
    finally:
        maintainer.stop()
    with Brain.open(brain_path) as brain:
        assert brain.get(trace_id).embedding_status == 1


def test_a_failing_tick_is_logged_and_the_thread_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gone = tmp_path / "never-made.sqlite"
    maintainer = Maintainer(gone, None, interval=3600).start()
    try:
        assert maintainer.wait_for_ticks(1, WAIT_S)
        assert maintainer.last is not None
        assert (
            maintainer.last.error is not None and "open the brain failed" in maintainer.last.error
        )
        maintainer.poke()
        assert maintainer.wait_for_ticks(2, WAIT_S)  # it tried again
    finally:
        maintainer.stop()
    assert not gone.exists()  # upkeep never makes a brain
    assert "open the brain failed" in caplog.text


def test_stop_ends_the_thread(brain_path: Path) -> None:
    with Brain.open(brain_path) as brain:
        brain.add("x")
    maintainer = Maintainer(brain_path, None, interval=3600).start()
    assert maintainer.wait_for_ticks(1, WAIT_S)
    maintainer.stop()
    assert not maintainer._thread.is_alive()
    with pytest.raises(ValueError):
        Maintainer(brain_path, None, interval=0)


def test_writes_are_embedded_just_after_them(brain_path: Path, ollama_server) -> None:
    """`backfill_soon` after a write: the text gets its vector without a tick, a burst of
    writes in one Ollama call."""
    with Brain.open(brain_path) as brain:
        brain.add("seeded")
    maintainer = Maintainer(
        brain_path, None, embedder_factory=embedder_for(ollama_server.url), interval=3600
    ).start()
    try:
        assert maintainer.wait_for_ticks(1, WAIT_S)
        calls = ollama_server.embed_count()
        with Brain.open(brain_path) as brain:
            ids = [brain.add(f"burst {i}").id for i in range(5)]
            for _ in ids:
                maintainer.backfill_soon()
            assert maintainer.wait_for_backfills(1, WAIT_S)
            assert all(t.embedding_status == 1 for t in brain.get_many(ids).values())
        assert ollama_server.embed_count() == calls + 1
    finally:
        maintainer.stop()
