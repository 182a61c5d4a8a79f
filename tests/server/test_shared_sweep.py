"""A server on a shared brain sweeps expired memories as a file's upkeep does: at start,
then every interval, on its worker between the calls, journaled under `sweep`; a memory
whose time has not come stays, and closing the service stops the sweeps."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memgui.core.errors import NotFound
from memgui.core.shared_brain import SharedBrain
from memgui.server.runtime import ServerOptions, ToolService

pytestmark = pytest.mark.slow  # a real server
WAIT_S = 60.0
HOUR_MS = 3_600_000


def options(address: str, interval: float) -> ServerOptions:
    return ServerOptions(
        brain_path=Path("unused.sqlite"),
        brain_id=None,
        ollama_url="http://127.0.0.1:9",  # nothing answers: no vectors, sweeps only
        embed_model="nomic-embed-text",
        brain_address=address,
        maintenance_interval=interval,
    )


def test_a_shared_brains_server_sweeps_expired_memories_every_interval(pg_address: str) -> None:
    with SharedBrain.open(pg_address, actor="agent") as agent:
        soon = agent.add("expires within a minute", ttl_secs=60).id
        later = agent.add("expires in a day", ttl_secs=86_400).id
        kept = agent.add("never expires").id
    service = ToolService(options(pg_address, interval=0.05), actor="mcp:test")
    brain = service.brain
    assert isinstance(brain, SharedBrain)
    real_clock = brain.clock
    brain.clock = lambda: real_clock() + 2 * HOUR_MS  # two hours on: only `soon` is due
    swept = threading.Event()
    sweep = service._sweep_shared

    def sweep_and_tell() -> None:
        sweep()
        swept.set()

    service._sweep_shared = sweep_and_tell  # type: ignore[method-assign]
    service.start()
    try:
        assert swept.wait(WAIT_S)
        with SharedBrain.open(pg_address, actor="check") as check:
            with pytest.raises(NotFound):
                check.get(soon)
            assert check.get(later).id == later and check.get(kept).id == kept
            assert [entry.actor for entry in check.history(soon)][-1] == "sweep"
        # Later intervals go on sweeping what falls due meanwhile.
        swept.clear()
        brain.clock = lambda: real_clock() + 48 * HOUR_MS
        assert swept.wait(WAIT_S)
        swept.clear()
        assert swept.wait(WAIT_S)  # a whole sweep after the clock moved
        with SharedBrain.open(pg_address, actor="check") as check:
            with pytest.raises(NotFound):
                check.get(later)
            assert check.get(kept).id == kept
    finally:
        service.close()
    assert service._sweeper is not None and not service._sweeper.is_alive()
