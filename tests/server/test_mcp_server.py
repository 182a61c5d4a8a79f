"""`memgui serve-mcp` as a real process behind the MCP SDK's own stdio client.

Every tool of both profiles, each bad input of seed 001's bounds table (a JSON-RPC
`invalid_params` error whose message names the field, the range and the value), the clean
not-found results, and the journal's actor for an MCP client's writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import apsw
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError

from memgui.core.brain import Brain
from tests.support.servers import mcp_session, server_env, tool_json, tool_text

pytestmark = pytest.mark.slow

I64_MAX, I64_MIN = 2**63 - 1, -(2**63)
BAD_LIMITS = (0, -1, 201, I64_MAX, I64_MIN)
BAD_TTLS = (0, -1, 3_155_760_001, I64_MAX, I64_MIN)
KIND_REFUSED = (
    "invalid argument: kind must be one of relates_to, supersedes, caused_by (got 'blocks')"
)
TYPE_REFUSED = (
    "invalid memory type 'decision' (expected one of DECISION, PATTERN, ERROR, TODO, "
    "ARCHITECTURE, CONSTRAINT)"
)
EXPAND_REFUSED = (
    "invalid argument: limit is required when expand_links is true; pass a limit between 1 and 200"
)

Ask = Callable[..., Awaitable[Any]]


def answers(session: ClientSession) -> Ask:
    """`await ask(tool, **args)`: the JSON a successful call answered."""

    async def ask(tool: str, **args: object) -> Any:
        return tool_json(await session.call_tool(tool, args))

    return ask


async def refused(session: ClientSession, tool: str, **args: object) -> str:
    """The message of the `invalid_params` error a call is refused with."""
    with pytest.raises(MCPError) as caught:
        await session.call_tool(tool, args)
    assert caught.value.code == types.INVALID_PARAMS, caught.value.message
    return caught.value.message


def test_agent_memory_profile_over_stdio(tmp_path: Path) -> None:
    brain = tmp_path / "brain.sqlite"
    args = ("--brain", str(brain), "serve-mcp")
    ids: dict[str, str] = {}

    async def session_run() -> None:
        async with mcp_session(server_env(tmp_path), *args, client_name="Claude Code") as s:
            ids["first"], ids["second"] = await _store_search_list(s)
            await _links_update_forget(s, ids["first"], ids["second"])
            await _bounds_table(s, ids["first"])

    anyio.run(session_run)
    with Brain.open(brain) as b:
        assert {entry.actor for entry in b.journal_since(0)} == {"mcp:Claude Code"}
        assert b.get(ids["first"]).tags == ()  # the stale write changed nothing
        # Each search that returned it noted a recall (after answering); listing did not.
        assert b.get(ids["first"]).retrieval_count == 2


async def _store_search_list(s: ClientSession) -> tuple[str, str]:
    ask = answers(s)
    listed = await s.list_tools()
    assert [t.name for t in listed.tools] == [
        "memory_store", "memory_search", "memory_list", "memory_update",
        "memory_link", "memory_unlink", "memory_forget",
    ]  # fmt: skip
    wire = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
    assert len(json.dumps(wire)) < 8 * 1024
    stored = await s.call_tool(
        "memory_store",
        {
            "content": "We chose io.github.unityinflow as the Maven group.",
            "type": "DECISION",
            "tags": ["maven", "release"],
            "scope": "kore-runtime",
            "ttl_secs": None,
        },
    )
    first = tool_text(stored)  # the id as text, as agent-memory answers
    assert first.startswith("mt_")
    second = tool_text(
        await s.call_tool("memory_store", {"content": "Release on Fridays", "type": "TODO"})
    )
    found = await ask("memory_search", query="maven group")
    assert found["search_mode"] == "keyword"  # Ollama is down for this server
    [hit] = found["results"]
    assert (hit["id"], hit["type"], hit["scope"]) == (first, "DECISION", "kore-runtime")
    assert hit["tags"] == ["maven", "release"] and "related" not in hit
    rewritten = await ask("memory_search", query="what about maven?")  # FTS5 refuses it
    assert [r["id"] for r in rewritten["results"]] == [first]
    assert [m["id"] for m in await ask("memory_list")] == [second, first]  # newest first
    assert [m["id"] for m in await ask("memory_list", type="TODO")] == [second]
    return first, second


async def _links_update_forget(s: ClientSession, first: str, second: str) -> None:
    ask = answers(s)
    edge = {"from_id": second, "to_id": first, "kind": "supersedes"}
    assert await ask("memory_link", **edge) == dict(edge, linked=True)
    assert await ask("memory_link", **edge) == dict(edge, linked=True)  # idempotent
    expanded = await ask("memory_list", limit=10, expand_links=True)
    [related] = next(m for m in expanded if m["id"] == first)["related"]
    assert related == {
        "id": second, "kind": "superseded_by", "direction": "in",
        "type": "TODO", "snippet": "Release on Fridays", "tags": [],
    }  # fmt: skip
    updated = await ask("memory_update", id=first, tags=None, ttl_secs=60)
    assert updated["tags"] == [] and updated["embedding_status"] == 0
    assert updated["content"].startswith("We chose")
    assert await ask("memory_unlink", **edge) == dict(edge, unlinked=True)
    assert await ask("memory_unlink", **edge) == dict(edge, unlinked=False, reason="not_found")
    assert await ask("memory_forget", id=second) == {"id": second, "deleted": True}
    # Clean not-found results that echo the id as sent (an integer id too).
    assert await ask("memory_forget", id=second) == {
        "id": second, "deleted": False, "reason": "not_found"}  # fmt: skip
    assert await ask("memory_forget", id=42) == {"id": 42, "deleted": False, "reason": "not_found"}
    assert await ask("memory_update", id=42, content="x") == {
        "id": 42, "updated": False, "reason": "not_found"}  # fmt: skip
    half = {"from_id": first, "to_id": 57, "kind": "relates_to"}
    assert await ask("memory_link", **half) == dict(
        half, linked=False, reason="not_found", missing_id=57
    )


async def _bounds_table(s: ClientSession, first: str) -> None:
    for value in BAD_LIMITS:
        expected = f"invalid argument: limit must be between 1 and 200 (got {value})"
        assert await refused(s, "memory_search", query="x", limit=value) == expected
        assert await refused(s, "memory_list", limit=value) == expected
    for value in BAD_TTLS:
        expected = f"invalid argument: ttl_secs must be between 1 and 3155760000 (got {value})"
        assert await refused(s, "memory_store", content="x", type="TODO", ttl_secs=value) == (
            expected
        )
        assert await refused(s, "memory_update", id=first, ttl_secs=value) == expected
    for value in (1, 200):
        assert await answers(s)("memory_list", limit=value)
    for value in (1, 3_155_760_000):
        assert (await answers(s)("memory_update", id=first, ttl_secs=value))["id"] == first
    assert await refused(s, "memory_list", expand_links=True) == EXPAND_REFUSED
    assert await refused(s, "memory_link", from_id=57, to_id=57, kind="relates_to") == (
        "invalid argument: from_id and to_id must differ (got 57)"
    )
    assert await refused(s, "memory_link", from_id=57, to_id=42, kind="blocks") == KIND_REFUSED
    assert await refused(s, "memory_store", content="x", type="decision") == TYPE_REFUSED
    for content in (None, "", "   "):
        message = await refused(s, "memory_update", id=first, content=content)
        assert message.startswith("invalid argument: content must not be")
    assert "at least one of content, tags, scope, ttl_secs" in await refused(
        s, "memory_update", id=first
    )
    assert "names no tool" in await refused(s, "memory_add", content="x")
    # Arguments that fit no parameter: a tool error result the agent reads.
    wrong = await s.call_tool("memory_update", {"id": first, "ttl_sec": 5})
    assert wrong.is_error
    assert tool_text(wrong).startswith("failed to deserialize parameters: unknown field `ttl_sec`")
    typed = await s.call_tool("memory_search", {"query": "x", "limit": "ten"})
    assert typed.is_error and "`limit`" in tool_text(typed)
    # A compare-and-set that lost: a tool error result naming the memory.
    stale = await s.call_tool("memory_update", {"id": first, "tags": ["x"], "expect_version": 1})
    assert stale.is_error and first in tool_text(stale)


def _archive(brain: Path, trace_id: str, text: str) -> None:
    """Archive a trace's original text as AgentOS's temporal gist does."""
    conn = apsw.Connection(str(brain))
    conn.execute(
        "INSERT INTO archived_traces (brain_id, trace_id, agent_id, verbatim_content, "
        "content_hash, trace_type, created_at, archived_at, archive_reason) "
        "VALUES ('brain', ?, 'a', ?, ?, 'episodic', 1, 1700000000000, 'gist')",
        (trace_id, text, hashlib.sha256(text.encode()).hexdigest()),
    )
    conn.close()


def test_agentos_profile_over_stdio(tmp_path: Path) -> None:
    brain = tmp_path / "brain.sqlite"
    with Brain.open(brain) as b:
        archived = b.add("An editor preference (gist)").id
    text = "The user said: I prefer dark mode in every editor, always."
    _archive(brain, archived, text)
    args = ("--brain", str(brain), "serve-mcp", "--profile", "agentos", "--rehydrate")

    async def session_run() -> None:
        async with mcp_session(server_env(tmp_path), *args, client_name="agentos-host") as s:
            ask = answers(s)
            listed = await s.list_tools()
            assert [t.name for t in listed.tools] == [
                "memory_add", "memory_update", "memory_delete", "memory_merge",
                "memory_search", "memory_reflect", "rehydrate_memory",
            ]  # fmt: skip
            wire = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
            assert len(json.dumps(wire)) < 8 * 1024
            a = (
                await ask(
                    "memory_add",
                    content="User prefers dark mode and TypeScript.",
                    type="semantic",
                    tags=["preference", "ui"],
                )
            )["traceId"]
            b = (await ask("memory_add", content="User likes dark themes in a terminal."))[
                "traceId"
            ]
            hits = (await ask("memory_search", query="dark AND mode"))["results"]
            assert [r["id"] for r in hits] == [a] and hits[0]["type"] == "semantic"
            assert set(hits[0]) == {"id", "content", "type", "scope", "strength", "tags"}
            natural = (await ask("memory_search", query="what's dark?"))["results"]
            assert {r["id"] for r in natural} == {a, b}  # FTS5 refused it; rewritten
            assert await ask("memory_search", query="  ") == {"results": []}
            assert await ask("memory_update", traceId=a, tags=["ui"]) == {"updated": True}
            assert await ask("memory_update", traceId=a) == {"updated": False}
            assert await ask("memory_update", traceId="mt_none", content="x") == {"updated": False}
            merged = await ask("memory_merge", traceIds=[a, b, "mt_none"])
            assert merged == {"survivorId": a, "deletedIds": [b]}
            assert await refused(s, "memory_merge", traceIds=[a, b]) == (
                "Found only 1 active trace(s) for the provided IDs. Need at least 2."
            )
            assert await refused(s, "memory_merge", traceIds=[a]) == (
                "traceIds must contain at least 2 trace IDs."
            )
            for limit in (0, 101):
                assert await refused(s, "memory_search", query="x", limit=limit) == (
                    f"invalid argument: limit must be between 1 and 100 (got {limit})"
                )
            assert "type must be one of episodic" in await refused(
                s, "memory_add", content="x", type="DECISION"
            )
            assert await ask("memory_delete", traceId=a) == {"deleted": True}
            assert await ask("memory_delete", traceId=a) == {"deleted": False}
            assert await ask("rehydrate_memory", traceId=archived) == {
                "verbatimContent": text,
                "archivedAt": 1700000000000,
            }
            assert await ask("rehydrate_memory", traceId=a) == {
                "verbatimContent": None,
                "archivedAt": None,
            }
            for _ in range(2):
                await ask("memory_add", content="The staging server is called Kestrel.")
            reflected = await ask("memory_reflect", topic="servers")
            assert set(reflected) == {
                "pruned", "merged", "derived", "compacted", "durationMs", "personalityDecayed",
            }  # fmt: skip
            assert reflected["merged"] == 1 and reflected["pruned"] == 0

    anyio.run(session_run)
    conn = apsw.Connection(str(brain))
    assert conn.execute("SELECT trace_id FROM archive_access_log").fetchall() == [(archived,)]
    actors = {r[0] for r in conn.execute("SELECT DISTINCT actor FROM memgui_journal")}
    conn.close()
    # the seeding, the client's writes, and the consolidation it asked for (one batch)
    assert actors == {"cli", "mcp:agentos-host", "consolidation"}
