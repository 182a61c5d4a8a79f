"""`memgui serve-mcp`: the brain's tools over MCP on stdio (the official `mcp` SDK).

The low-level `Server` is used rather than FastMCP: the tool list and schemas come from
`memgui.core.tools` as they are, and refusals map exactly as seed 001's server maps them —
an out-of-bounds or otherwise invalid argument is a JSON-RPC `invalid_params` error naming
field, range and value; arguments that do not fit the tool at all (an unknown field, text
where a number goes) are a tool result with `isError` ("failed to deserialize parameters:
…"), as is a compare-and-set that lost; a storage failure is `internal_error` with a generic
message, its detail in the log. A tool a shared (PostgreSQL) brain does not serve yet is a
tool result with `isError` naming the operation. stdout carries nothing but the protocol:
the SDK points fd 1 at stderr while it serves, and every log line goes to stderr and the
log file.
"""

from __future__ import annotations

import logging
import signal
import unicodedata
from typing import Any

import anyio
import mcp_types as types
import orjson
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from memgui.core.tools import ToolResult
from memgui.server.runtime import (
    INTERNAL,
    INVALID,
    UNAVAILABLE,
    ServerOptions,
    ToolService,
    failure,
    operation_of,
    quiet_collector,
)

log = logging.getLogger("memgui.server.mcp")

SERVER_NAME = "memgui"
INSTRUCTIONS = "Long-term memory shared with the memgui app: store, search and edit memories."
MAX_CLIENT_NAME = 64
READY = "memgui MCP server ready"  # the line on stderr a supervisor (or a test) waits for


def client_actor(ctx: Any) -> str:
    """`mcp:<client name from initialize>`, the journal's actor for this client's writes."""
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    name = getattr(getattr(params, "client_info", None), "name", None)
    if not isinstance(name, str):
        return "mcp:unknown"
    # One printable line, so the app's activity list shows it as sent.
    cleaned = "".join(c if unicodedata.category(c)[0] not in "CZ" else " " for c in name)
    cleaned = " ".join(cleaned.split())[:MAX_CLIENT_NAME]
    return f"mcp:{cleaned or 'unknown'}"


def _text(result: ToolResult) -> list[types.ContentBlock]:
    blocks: list[types.ContentBlock]
    if result.text is not None:
        blocks = [types.TextContent(text=result.text)]
    else:
        blocks = [types.TextContent(text=orjson.dumps(result.data).decode())]
    if result.next_cursor is not None:
        more = orjson.dumps({"next_cursor": result.next_cursor}).decode()
        blocks.append(types.TextContent(text=more))
    return blocks


def build_server(service: ToolService) -> Server[Any]:
    """A low-level MCP server whose tools are the service's profile."""
    listing = [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.schema,
            annotations=types.ToolAnnotations(read_only_hint=not tool.writes),
        )
        for tool in service.profile.tools.values()
    ]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            result = await service.call(params.name, params.arguments, client_actor(ctx))
        except Exception as error:
            kind, message = failure(error, f"{operation_of(params.name)}")
            if kind == INVALID:
                raise MCPError(types.INVALID_PARAMS, message) from None
            if kind in (INTERNAL, UNAVAILABLE):
                raise MCPError(types.INTERNAL_ERROR, message) from None
            # Arguments of the wrong shape, a lost compare-and-set: the agent reads them.
            return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)
        return types.CallToolResult(content=_text(result))

    server: Server[Any] = Server(
        SERVER_NAME,
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware = []  # no tracing span per message: nothing here exports traces
    return server


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memgui")
    except PackageNotFoundError:
        return "0"


def serve(options: ServerOptions) -> None:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    service = ToolService(options, actor="mcp:unknown").start()
    quiet_collector()
    try:
        anyio.run(_serve, service)
    finally:
        service.close()


async def _serve(service: ToolService) -> None:
    server = build_server(service)
    async with anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, group.cancel_scope)
        await _serve_stdio(service, server)
        group.cancel_scope.cancel()


async def _stop_on_signal(scope: anyio.CancelScope) -> None:
    """SIGTERM (a host stopping its servers) ends serving; the brain is then closed."""
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            log.info("stopping on SIGTERM")
            scope.cancel()
            return


async def _serve_stdio(service: ToolService, server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        log.info(
            "%s (profile %s, brain %s, Ollama %s)",
            READY,
            service.profile.name,
            service.where,
            service.embedder.url,
        )
        await server.run(read_stream, write_stream, server.create_initialization_options())
