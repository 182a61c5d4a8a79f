"""Both servers search by meaning on both engines: `memgui serve-mcp` behind the MCP SDK's
stdio client and `memgui serve-rest` on a real port, each with the tests' Ollama-compatible
server (the real `ollama` client), serving a brain file or a shared brain on a real
PostgreSQL server.

A memory stored through the server is embedded behind the call with the server's model
(`--embed-model`, `$MEMGUI_OLLAMA_URL`), then found by a paraphrase that shares no word with
it: keyword search finds nothing there, hybrid and cognitive search find it. Bad input is
refused with a message naming the field and the value, on both engines.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError

from memgui.core.engines import open_store
from tests.support.ollama_server import FakeOllama
from tests.support.servers import mcp_session, rest_server, server_env, tool_json, tool_text

pytestmark = pytest.mark.slow
MEMORY = "The car broke down on a cold morning"
PARAPHRASE = "vehicle failure"  # no word of MEMORY: only its meaning finds it
WAIT_S = 60.0


@pytest.fixture(params=["sqlite", "postgresql"])
def brain_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the server's brain is: a new file, or a shared brain in an empty database."""
    if request.param == "sqlite":
        return str(tmp_path / "brain.sqlite")
    return str(request.getfixturevalue("pg_address"))


def embedding_model(address: str) -> Any:
    with open_store(address, "team", actor="test") as store:
        return store.embedding_info()["model"]


async def first_answer(probe: Callable[[], Awaitable[Any]], what: str) -> Any:
    """The first true answer of `probe`, asked until the safety net (a state, never a nap)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        answer = await probe()
        if answer:
            return answer
        await anyio.sleep(0.05)  # between two looks at the state
    raise AssertionError(f"timed out waiting for {what}")


def test_mcp_searches_by_meaning_on_both_engines(
    tmp_path: Path, brain_address: str, ollama_server: FakeOllama
) -> None:
    env = server_env(tmp_path, MEMGUI_OLLAMA_URL=ollama_server.url)
    base = ("--brain", brain_address, "--brain-id", "team", "serve-mcp")

    async def run() -> None:
        async with mcp_session(env, *base) as session:
            stored = await session.call_tool("memory_store", {"content": MEMORY, "type": "TODO"})
            assert not stored.is_error, tool_text(stored)
            trace_id = tool_text(stored)

            async def hybrid() -> Any:
                found = tool_json(await session.call_tool("memory_search", {"query": PARAPHRASE}))
                return found if found["search_mode"] == "hybrid" and found["results"] else None

            found = await first_answer(hybrid, "the new memory's vector")
            assert [r["id"] for r in found["results"]] == [trace_id]
        async with mcp_session(env, *base, "--profile", "agentos") as session:
            keyword = tool_json(
                await session.call_tool("memory_search", {"query": PARAPHRASE, "mode": "keyword"})
            )
            assert keyword["results"] == []  # no shared word
            cognitive = tool_json(
                await session.call_tool("memory_search", {"query": PARAPHRASE, "mode": "cognitive"})
            )
            [hit] = cognitive["results"]
            assert hit["id"] == trace_id and hit["scoreBreakdown"]["similarityScore"] > 0.5
            # AgentOS's tools refuse bad input as a protocol error naming field and value.
            unknown = "mode must be one of keyword, cognitive (got 'vibes')"
            with pytest.raises(MCPError, match=re.escape(unknown)):
                await session.call_tool("memory_search", {"query": PARAPHRASE, "mode": "vibes"})
            with pytest.raises(MCPError, match="mood is for mode cognitive only"):
                await session.call_tool(
                    "memory_search", {"query": PARAPHRASE, "mode": "keyword", "mood": 0.5}
                )
            still = tool_json(await session.call_tool("memory_search", {"query": "car"}))
            assert [r["id"] for r in still["results"]] == [trace_id]  # and it goes on

    anyio.run(run)
    assert MEMORY in ollama_server.embedded_texts
    assert embedding_model(brain_address) == "nomic-embed-text"


def test_rest_searches_by_meaning_on_both_engines(
    tmp_path: Path, brain_address: str, ollama_server: FakeOllama
) -> None:
    env = server_env(tmp_path, MEMGUI_OLLAMA_URL=ollama_server.url)
    args = ("--brain", brain_address, "--brain-id", "team", "--embed-model", "all-minilm")
    with (
        rest_server(env, *args, "serve-rest", "--addr", "127.0.0.1:0") as server,
        httpx.Client(base_url=server.url, timeout=60) as api,
    ):
        assert api.get("/health").json() == {"status": "ok", "embedder": "ready"}
        made = api.post("/api/memories", json={"content": MEMORY, "type": "DECISION"})
        assert made.status_code == 201, made.text
        trace_id = made.json()["id"]
        other = api.post("/api/memories", json={"content": "Dinner at eight", "type": "TODO"})
        assert other.status_code == 201, other.text

        async def hybrid() -> Any:
            found = api.post("/api/search", json={"query": PARAPHRASE}).json()
            return found if found["search_mode"] == "hybrid" and found["results"] else None

        found = anyio.run(first_answer, hybrid, "the new memory's vector")
        assert [r["id"] for r in found["results"]][0] == trace_id
        for body, field in (
            ({"query": PARAPHRASE, "limit": 0}, "limit"),
            ({"query": PARAPHRASE, "type": "WISH"}, "type"),
        ):
            bad = api.post("/api/search", json=body)
            assert bad.status_code == 400, bad.text
            assert field in bad.json()["error"], bad.text
    assert embedding_model(brain_address) == "all-minilm"  # the server's model, as on a file
