"""Real server processes for tests: `memgui serve-mcp` behind the SDK's stdio client, and
`memgui serve-rest` on a free loopback port.

Readiness is the server's own signal, never a sleep: an MCP server is ready when the
`initialize` handshake returns; a REST server when it prints `REST listening on http://…`
on stderr (read by a thread, waited for with a generous timeout).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

# Nothing listens on port 9 (discard): Ollama reads as down at once, never a slow timeout.
DEAD_OLLAMA = "http://127.0.0.1:9"
READY_TIMEOUT_S = 120.0  # generous: a loaded 2-core machine starts Python slowly
REST_READY = re.compile(r"REST listening on (http://\S+)")


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment for a server process: its own log folder, no brain or Ollama from
    the caller's environment (the fake Ollama or a dead port instead)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMGUI_", "AGENT_MEMORY_"))}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    env["MEMGUI_OLLAMA_URL"] = DEAD_OLLAMA
    env.update(extra)
    return env


def memgui_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "memgui", *args]


# --- MCP -------------------------------------------------------------------------------------


@asynccontextmanager
async def mcp_session(
    env: dict[str, str], *args: str, client_name: str = "memgui-tests", errlog: Any = None
) -> AsyncIterator[ClientSession]:
    """`memgui <args>` (e.g. `--brain B serve-mcp`) spawned by the SDK's stdio client,
    initialized; its stderr goes to `errlog` (a file) when given."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "memgui", *args], env=env)
    err = errlog if errlog is not None else sys.stderr
    async with stdio_client(params, errlog=err) as (read, write):
        info = types.Implementation(name=client_name, version="1.0")
        async with ClientSession(read, write, client_info=info) as session:
            await session.initialize()
            yield session


def tool_text(result: types.CallToolResult) -> str:
    assert result.content, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def tool_json(result: types.CallToolResult) -> Any:
    """The JSON a successful tool call answered."""
    assert not result.is_error, tool_text(result)
    return json.loads(tool_text(result))


# --- REST ------------------------------------------------------------------------------------


@dataclass
class RestServer:
    process: subprocess.Popen[str]
    url: str
    stderr_lines: list[str] = field(default_factory=list)

    def log(self) -> str:
        return "".join(self.stderr_lines)


def _pump(stream: Any, lines: list[str], found: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.append(line)
        match = REST_READY.search(line)
        if match:
            found.put(match.group(1))
    found.put(None)  # the process closed stderr: it ended


@contextmanager
def rest_server(env: dict[str, str], *args: str) -> Iterator[RestServer]:
    """`memgui <args>` (e.g. `--brain B serve-rest --addr 127.0.0.1:0`), until it said
    where it listens; stopped with SIGTERM (uvicorn's graceful shutdown) afterwards."""
    process = subprocess.Popen(
        memgui_argv(*args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    lines: list[str] = []
    found: queue.Queue[str | None] = queue.Queue()
    pump = threading.Thread(target=_pump, args=(process.stderr, lines, found), daemon=True)
    pump.start()
    try:
        try:
            url = found.get(timeout=READY_TIMEOUT_S)
        except queue.Empty:
            url = None
        if url is None:
            raise AssertionError(f"serve-rest did not start:\n{''.join(lines)}")
        server = RestServer(process, url, lines)
        yield server
    finally:
        stop(process)
        pump.join(timeout=30)


def stop(process: subprocess.Popen[Any]) -> int:
    """SIGTERM, then the exit status (SIGKILL only if it hangs past a minute)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode
