"""Both servers on both engines: `memgui serve-mcp` behind the MCP SDK's stdio client and
`memgui serve-rest` on a real port with httpx, each serving a brain file and a shared brain
on a real PostgreSQL server (`--brain 'postgresql://…?brain_id=team'`).

The same calls, the same answers: store, search, list, update, forget, link and unlink,
and the brain's own history names the client that wrote (`test_rehydrate_on_engines.py`:
rehydrate_memory on both engines).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from mcp.client.session import ClientSession

from memgui.cli.main import main
from memgui.core.engines import open_store
from tests.support.servers import mcp_session, rest_server, server_env, tool_json, tool_text

pytestmark = pytest.mark.slow
JSON = {"content-type": "application/json"}


@pytest.fixture(params=["sqlite", "postgresql"])
def brain_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the server's brain is: a new file, or a shared brain in an empty database."""
    if request.param == "sqlite":
        return str(tmp_path / "brain.sqlite")
    return str(request.getfixturevalue("pg_address"))


def history_actors(address: str, trace_id: str) -> list[tuple[str, str]]:
    """(op, actor) of each journal row of a trace, read by a connection of the test's own."""
    with open_store(address, "team", actor="test") as store:
        return [(entry.op, entry.actor) for entry in store.history(trace_id)]


def test_mcp_tools_on_both_engines(tmp_path: Path, brain_address: str) -> None:
    env = server_env(tmp_path)
    ids: dict[str, str] = {}

    async def run() -> None:
        args = ("--brain", brain_address, "--brain-id", "team", "serve-mcp")
        async with mcp_session(env, *args, client_name="team-agent") as session:
            await agent_memory_calls(session, ids)

    anyio.run(run)
    first, second = ids["first"], ids["second"]
    assert history_actors(brain_address, first) == [
        ("add", "mcp:team-agent"),
        ("update", "mcp:team-agent"),
        ("link", "mcp:team-agent"),
        ("unlink", "mcp:team-agent"),
    ]
    assert history_actors(brain_address, second) == [
        ("add", "mcp:team-agent"),
        ("link", "mcp:team-agent"),
        ("unlink", "mcp:team-agent"),
        ("forget", "mcp:team-agent"),
    ]
    with open_store(brain_address, "team", actor="test") as store:
        assert store.get(first).content == "We deploy on Tuesdays now"
        assert store.get(second).deleted


async def agent_memory_calls(session: ClientSession, ids: dict[str, str]) -> None:
    async def ask(tool: str, **args: object) -> object:
        return tool_json(await session.call_tool(tool, args))

    stored = await session.call_tool(
        "memory_store", {"content": "We deploy on Mondays", "type": "DECISION", "tags": ["ops"]}
    )
    first = tool_text(stored)
    second = tool_text(
        await session.call_tool(
            "memory_store", {"content": "Rollbacks go through CI", "type": "PATTERN"}
        )
    )
    ids.update(first=first, second=second)
    found = await ask("memory_search", query="deploy")
    assert isinstance(found, dict)
    assert [r["id"] for r in found["results"]] == [first]
    assert found["search_mode"] == "keyword"  # no vectors (and no Ollama) here
    listed = await ask("memory_list", tag="ops")
    assert isinstance(listed, list) and [m["id"] for m in listed] == [first]
    read = listed[0]["version"]
    updated = await ask(
        "memory_update", id=first, content="We deploy on Tuesdays now", expect_version=read
    )
    assert isinstance(updated, dict) and updated["version"] == read + 1
    stale = await session.call_tool(
        "memory_update", {"id": first, "content": "lost", "expect_version": read}
    )
    assert stale.is_error and "version" in tool_text(stale)
    assert await ask("memory_link", from_id=first, to_id=second, kind="relates_to") == {
        "from_id": first, "to_id": second, "kind": "relates_to", "linked": True,
    }  # fmt: skip
    expanded = await ask("memory_search", query="Tuesdays", expand_links=True)
    assert isinstance(expanded, dict)
    assert [r["id"] for r in expanded["results"][0]["related"]] == [second]
    unlinked = await ask("memory_unlink", from_id=first, to_id=second, kind="relates_to")
    assert isinstance(unlinked, dict) and unlinked["unlinked"] is True
    assert await ask("memory_forget", id=second) == {"id": second, "deleted": True}
    gone = await session.call_tool("memory_forget", {"id": second})
    assert not gone.is_error and "not_found" in tool_text(gone)


def test_mcp_agentos_tools_on_a_shared_brain(tmp_path: Path, pg_address: str) -> None:
    """merge, reflect, rehydrate and the cognitive search run there."""
    env = server_env(tmp_path)

    async def run() -> None:
        args = ("--brain", pg_address, "serve-mcp", "--profile", "agentos", "--rehydrate")
        async with mcp_session(env, *args) as session:
            one = tool_json(await session.call_tool("memory_add", {"content": "alpha note"}))
            two = tool_json(await session.call_tool("memory_add", {"content": "beta note"}))
            ids = [one["traceId"], two["traceId"]]
            merged = tool_json(await session.call_tool("memory_merge", {"traceIds": ids}))
            assert merged["survivorId"] in ids and len(merged["deletedIds"]) == 1
            reflected = await session.call_tool("memory_reflect", {})
            assert not reflected.is_error, tool_text(reflected)
            rehydrated = await session.call_tool("rehydrate_memory", {"traceId": ids[0]})
            assert tool_json(rehydrated) == {"verbatimContent": None, "archivedAt": None}
            cognitive = tool_json(
                await session.call_tool(
                    "memory_search", {"query": "note", "mode": "cognitive", "mood": 0.2}
                )
            )
            [hit] = cognitive["results"]
            assert hit["id"] == merged["survivorId"]
            assert hit["why"].startswith(f"{hit['retrievalScore']:.2f} = similarity 1.00")
            assert set(hit["scoreBreakdown"]) == {
                "strengthScore", "similarityScore", "recencyScore",
                "emotionalCongruenceScore", "graphActivationScore", "importanceScore",
            }  # fmt: skip
            found = tool_json(await session.call_tool("memory_search", {"query": "note"}))
            assert [r["id"] for r in found["results"]] == [merged["survivorId"]]

    anyio.run(run)
    with open_store(pg_address, actor="test") as store:
        assert store.count() == 1


@pytest.fixture
def rest_api(tmp_path: Path, brain_address: str) -> Iterator[httpx.Client]:
    args = ("--brain", brain_address, "--brain-id", "team", "serve-rest", "--addr", "127.0.0.1:0")
    with (
        rest_server(server_env(tmp_path), *args) as server,
        httpx.Client(base_url=server.url, timeout=60) as client,
    ):
        yield client


def test_rest_routes_on_both_engines(rest_api: httpx.Client, brain_address: str) -> None:
    api = rest_api
    assert api.get("/health").json()["status"] == "ok"
    made = api.post("/api/memories", json={"content": "Backups run nightly", "type": "DECISION"})
    assert made.status_code == 201, made.text
    first = made.json()["id"]
    second = api.post("/api/memories", json={"content": "Restore drills monthly", "type": "TODO"})
    second_id = second.json()["id"]
    found = api.post("/api/search", json={"query": "backups"})
    assert found.status_code == 200 and [r["id"] for r in found.json()["results"]] == [first]
    read = api.get("/api/memories", params={"type": "DECISION"}).json()[0]["version"]
    patched = api.patch(f"/api/memories/{first}", json={"tags": ["ops"], "expect_version": read})
    assert patched.status_code == 200 and patched.json()["tags"] == ["ops"]
    stale = api.patch(f"/api/memories/{first}", json={"tags": [], "expect_version": read})
    assert stale.status_code == 409, stale.text
    link = {"from_id": first, "to_id": second_id, "kind": "caused_by"}
    assert api.post("/api/links", json=link).json()["linked"] is True
    listed = api.get("/api/memories", params={"tag": "ops", "expand_links": "true", "limit": 5})
    assert [m["id"] for m in listed.json()] == [first]
    assert [r["id"] for r in listed.json()[0]["related"]] == [second_id]
    assert api.delete(f"/api/links/{first}/{second_id}/caused_by").json()["unlinked"] is True
    assert api.delete(f"/api/memories/{second_id}").json()["deleted"] is True
    missing = api.delete(f"/api/memories/{second_id}")
    assert missing.status_code == 404
    bad = api.post("/api/memories", json={"content": "x", "type": "TODO", "ttl_secs": 0})
    assert bad.status_code == 400 and "ttl_secs" in bad.json()["error"]
    assert history_actors(brain_address, first) == [
        ("add", "rest"), ("update", "rest"), ("link", "rest"), ("unlink", "rest"),
    ]  # fmt: skip


@pytest.mark.parametrize("command", ["serve-mcp", "serve-rest"])
def test_a_server_whose_shared_brain_is_unreachable_says_so(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nothing listens on port 9: the connection is refused at once.
    address = "postgresql://nobody:secret@127.0.0.1:9/memory?brain_id=team"
    assert main(["--brain", address, command]) == 3
    err = capsys.readouterr().err
    assert "cannot reach the PostgreSQL brain postgresql://nobody:***@127.0.0.1:9/" in err
    assert "secret" not in err
