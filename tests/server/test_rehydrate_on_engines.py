"""`rehydrate_memory` over stdio (the MCP SDK's client) on a brain file and on a shared
brain on a real PostgreSQL server: the same answers (the archived text when its SHA-256
still matches, nothing otherwise), the access noted in `archive_access_log` without a
journal row, and a bad `traceId` refused naming it, with nothing written."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import apsw
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from memgui.core.engines import open_store
from memgui.core.storage.engine import is_postgres_address, parse_postgres_address
from tests.support.servers import mcp_session, server_env, tool_json, tool_text

pytestmark = pytest.mark.slow
TEXT = "The user said: I prefer dark mode in every editor, always."
ARCHIVE = (
    "INSERT INTO archived_traces (brain_id, trace_id, agent_id, verbatim_content, "
    "content_hash, trace_type, created_at, archived_at, archive_reason) "
    "VALUES ('team', ?, 'a', ?, ?, 'episodic', 1, 1700000000000, 'gist')"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def brain_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "brain.sqlite")
    return str(request.getfixturevalue("pg_address"))


def sql(address: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """One statement by a connection of the test's own, on either engine (`?` marks)."""
    if is_postgres_address(address):
        import psycopg

        conninfo = parse_postgres_address(address).conninfo
        with psycopg.connect(conninfo, autocommit=True) as pg:
            cursor = pg.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []
    conn = apsw.Connection(address)
    try:
        return list(conn.execute(statement, params))
    finally:
        conn.close()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_rehydrate_memory_on_both_engines(tmp_path: Path, brain_address: str) -> None:
    with open_store(brain_address, "team", actor="test") as store:
        archived = store.add("An editor preference (gist)").id
        altered = store.add("Another gist").id
        plain = store.add("never archived").id
    sql(brain_address, ARCHIVE, (archived, TEXT, sha(TEXT)))
    sql(brain_address, ARCHIVE, (altered, "edited after archiving", sha("the original")))
    journal_before = sql(brain_address, "SELECT count(*) FROM memgui_journal")
    answers: dict[str, Any] = {}

    async def run() -> None:
        args = ("--brain", brain_address, "--brain-id", "team", "serve-mcp", "--profile",
                "agentos", "--rehydrate")  # fmt: skip
        async with mcp_session(server_env(tmp_path), *args) as session:
            for name, trace_id in (("archived", archived), ("altered", altered),
                                   ("plain", plain), ("unknown", "mt_none")):  # fmt: skip
                called = await session.call_tool("rehydrate_memory", {"traceId": trace_id})
                assert not called.is_error, tool_text(called)
                answers[name] = tool_json(called)
            for blank in ("", "   "):
                with pytest.raises(MCPError) as refused:
                    await session.call_tool("rehydrate_memory", {"traceId": blank})
                assert refused.value.code == types.INVALID_PARAMS
                assert refused.value.message == (
                    f"invalid argument: traceId must be a non-empty trace id (got {blank!r})"
                )
            missing = await session.call_tool("rehydrate_memory", {})
            assert missing.is_error and "traceId" in tool_text(missing)
            still = await session.call_tool("rehydrate_memory", {"traceId": archived})
            assert tool_json(still)["verbatimContent"] == TEXT  # the server goes on

    anyio.run(run)
    nothing = {"verbatimContent": None, "archivedAt": None}
    assert answers == {
        "archived": {"verbatimContent": TEXT, "archivedAt": 1700000000000},
        "altered": nothing,
        "plain": nothing,
        "unknown": nothing,
    }
    logged = sql(brain_address, "SELECT DISTINCT trace_id, request_context FROM archive_access_log")
    assert logged == [(archived, "rehydrate_memory_tool")]
    # bookkeeping, as a recall: no journal row, no version moved
    assert sql(brain_address, "SELECT count(*) FROM memgui_journal") == journal_before
    with open_store(brain_address, "team", actor="test") as store:
        assert store.get(archived).version == 1
