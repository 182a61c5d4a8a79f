"""stdout of `memgui serve-mcp` is the protocol channel and nothing else.

The client here is a plain pipe writing JSON-RPC lines, so every byte the server writes to
stdout is seen: each line must be one JSON-RPC message answering a request sent. Logs go
to stderr. The server also finds its brain and Ollama through agent-memory's variables.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memgui.core.brain import Brain
from tests.support.servers import memgui_argv, server_env, stop

pytestmark = pytest.mark.slow


def send(process: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()


def answer(process: subprocess.Popen[str]) -> dict[str, Any]:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line, "the server closed stdout"
    return json.loads(line)


def request(process: subprocess.Popen[str], id_: int, method: str, params: Any) -> dict:
    send(process, {"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    reply = answer(process)
    assert reply["jsonrpc"] == "2.0" and reply["id"] == id_, reply
    return reply


def test_stdout_is_pure_protocol_and_logs_go_to_stderr(tmp_path: Path) -> None:
    brain = tmp_path / "from-env.sqlite"
    env = server_env(tmp_path, AGENT_MEMORY_DB=str(brain))
    del env["MEMGUI_OLLAMA_URL"]
    env["AGENT_MEMORY_OLLAMA_URL"] = "http://127.0.0.1:9"
    err = (tmp_path / "stderr.log").open("w")
    process = subprocess.Popen(
        memgui_argv("serve-mcp", "--maintenance-interval", "3600"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=env,
    )
    try:
        init = request(process, 1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"},
        })  # fmt: skip
        assert init["result"]["serverInfo"]["name"] == "memgui"
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools = request(process, 2, "tools/list", {})["result"]["tools"]
        assert len(tools) == 7
        stored = request(process, 3, "tools/call", {
            "name": "memory_store", "arguments": {"content": "piped", "type": "PATTERN"},
        })["result"]  # fmt: skip
        trace_id = stored["content"][0]["text"]
        bad = request(process, 4, "tools/call", {
            "name": "memory_list", "arguments": {"limit": 0},
        })  # fmt: skip
        assert bad["error"]["code"] == -32602
        assert (
            bad["error"]["message"] == "invalid argument: limit must be between 1 and 200 (got 0)"
        )
        typed = request(
            process, 5, "tools/call", {"name": "memory_search", "arguments": {"query": 5}}
        )
        assert typed["result"]["isError"] is True
        garbage = request(process, 6, "tools/call", {"name": "memory_search", "arguments": []})
        assert garbage["error"]["code"] == -32602  # the SDK refuses arguments that are no object
        assert process.stdin is not None
        process.stdin.close()  # the client goes: the server ends
        rest = process.stdout.read() if process.stdout else ""
        assert process.wait(timeout=60) == 0
    finally:
        stop(process)
        err.close()
    assert rest == ""  # nothing after the last answer
    log = (tmp_path / "stderr.log").read_text()
    assert "memgui MCP server ready" in log and str(brain) in log
    assert "http://127.0.0.1:9" in log  # the Ollama agent-memory's variable named
    with Brain.open(brain) as b:
        assert b.get(trace_id).content == "piped"
        assert b.history(trace_id)[0].actor == "mcp:pipe"


def test_an_agent_memory_database_is_refused_untouched(tmp_path: Path) -> None:
    """$AGENT_MEMORY_DB may still name agent-memory's own database: serving it would add a
    brain's tables beside its `memories`. The server refuses it, says what to do, and the
    file is as it was."""
    import sqlite3

    database = tmp_path / "memory.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, content TEXT)")
    before = database.read_bytes()
    refused = subprocess.run(
        memgui_argv("serve-mcp"),
        input="", capture_output=True, text=True, timeout=120,
        env=server_env(tmp_path, AGENT_MEMORY_DB=str(database)),
    )  # fmt: skip
    assert refused.returncode == 2 and refused.stdout == ""
    assert "is an agent-memory database, not a memgui brain" in refused.stderr
    assert "memgui import memories.jsonl" in refused.stderr
    assert database.read_bytes() == before
