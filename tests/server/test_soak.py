"""Soak: four MCP servers, the REST server, CLI writers and the open app on one brain file.

About 10,000 mixed operations (store, update, search, list, link, forget), bounded in time
(`MEMGUI_SOAK_SECONDS`, default 35 s of operations; `MEMGUI_SOAK_OPS` for the total): every
call must succeed — no SQLITE_BUSY, no "database is locked" reaches a client, a log or the
window — and at the end the brain holds exactly what the clients were told: zero lost
writes. The app is a real main window in this process, following the journal live and
saving memories of its own as a person would (its undo commands, on the GUI thread, while
the clients run on another thread); at the end its table holds exactly the brain's memories
as they are, and its Agent activity badge counts every change the others made.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from PySide6.QtCore import QTimer

from memgui.core.brain import Brain
from memgui.core.errors import MemguiError
from memgui.ui import commands as cmd
from memgui.ui.dialogs.settings_dialog import URL_KEY
from tests.support.servers import (
    DEAD_OLLAMA,
    mcp_session,
    memgui_argv,
    rest_server,
    server_env,
    tool_json,
)
from tests.support.waiting import WAIT_MS
from tests.support.window import open_window

pytestmark = pytest.mark.slow

MCP_SERVERS = 4
CLI_WRITERS = 2
CLI_WRITES = 12  # each: a process start costs ~0.3 s of CPU the servers would rather have
TOTAL_OPS = int(os.environ.get("MEMGUI_SOAK_OPS", "10000"))
BUDGET_S = float(os.environ.get("MEMGUI_SOAK_SECONDS", "35"))
MIX = (("store", 40), ("update", 20), ("search", 15), ("list", 10), ("link", 8), ("forget", 7))


@dataclass
class Ledger:
    """What one client was told: its memories' last content, and which it forgot."""

    name: str
    content: dict[str, str] = field(default_factory=dict)
    forgotten: set[str] = field(default_factory=set)
    ops: int = 0
    errors: list[str] = field(default_factory=list)

    def live(self) -> list[str]:
        return [i for i in self.content if i not in self.forgotten]


class Client:
    """One client's calls, the same operations over MCP or REST."""

    def __init__(self, ledger: Ledger, seed: int) -> None:
        self.ledger = ledger
        self.rng = random.Random(seed)

    async def step(self) -> None:
        ops, weights = zip(*MIX, strict=True)
        op = self.rng.choices(ops, weights)[0]
        live = self.ledger.live()
        if op != "store" and op not in ("search", "list") and not live:
            op = "store"
        n = self.ledger.ops
        if op == "store":
            text = f"{self.ledger.name} memory {n} about widgets"
            self.ledger.content[await self.store(text)] = text
        elif op == "update":
            target = self.rng.choice(live)
            text = f"{self.ledger.name} edit {n} of a widget note"
            view = await self.update(target, text)
            assert view["content"] == text, view
            self.ledger.content[target] = text
        elif op == "search":
            await self.search("widgets")
        elif op == "list":
            await self.list()
        elif op == "link" and len(live) >= 2:
            a, b = self.rng.sample(live, 2)
            await self.link(a, b)
        elif op == "forget":
            target = self.rng.choice(live)
            await self.forget(target)
            self.ledger.forgotten.add(target)
        self.ledger.ops += 1


class McpClient(Client):
    def __init__(self, ledger: Ledger, seed: int, session: Any) -> None:
        super().__init__(ledger, seed)
        self.session = session

    async def call(self, tool: str, **args: Any) -> Any:
        result = await self.session.call_tool(tool, args)
        if tool == "memory_store":
            assert not result.is_error, result
            return result.content[0].text
        return tool_json(result)

    async def store(self, text: str) -> str:
        return await self.call("memory_store", content=text, type="PATTERN")

    async def update(self, trace_id: str, text: str) -> dict:
        return await self.call("memory_update", id=trace_id, content=text)

    async def search(self, query: str) -> None:
        await self.call("memory_search", query=query, limit=10)

    async def list(self) -> None:
        await self.call("memory_list", limit=20)

    async def link(self, a: str, b: str) -> None:
        assert (await self.call("memory_link", from_id=a, to_id=b, kind="relates_to"))["linked"]

    async def forget(self, trace_id: str) -> None:
        assert (await self.call("memory_forget", id=trace_id))["deleted"]


class RestClient(Client):
    def __init__(self, ledger: Ledger, seed: int, http: httpx.AsyncClient) -> None:
        super().__init__(ledger, seed)
        self.http = http

    async def ok(self, response: httpx.Response) -> Any:
        assert response.status_code in (200, 201), (response.status_code, response.text)
        return response.json()

    async def store(self, text: str) -> str:
        body = {"content": text, "type": "PATTERN"}
        return (await self.ok(await self.http.post("/api/memories", json=body)))["id"]

    async def update(self, trace_id: str, text: str) -> dict:
        return await self.ok(
            await self.http.patch(f"/api/memories/{trace_id}", json={"content": text})
        )

    async def search(self, query: str) -> None:
        await self.ok(await self.http.post("/api/search", json={"query": query, "limit": 10}))

    async def list(self) -> None:
        await self.ok(await self.http.get("/api/memories", params={"limit": 20}))

    async def link(self, a: str, b: str) -> None:
        body = {"from_id": a, "to_id": b, "kind": "relates_to"}
        assert (await self.ok(await self.http.post("/api/links", json=body)))["linked"]

    async def forget(self, trace_id: str) -> None:
        assert (await self.ok(await self.http.delete(f"/api/memories/{trace_id}")))["deleted"]


class AppWriter:
    """A person in the window: a new memory or an edit of one of theirs every `EVERY_MS`,
    through the window's undo commands, on the GUI thread."""

    EVERY_MS = 150

    def __init__(self, window: Any, ledger: Ledger, seed: int) -> None:
        self.window, self.ledger = window, ledger
        self.rng = random.Random(seed)
        self.timer = QTimer()
        self.timer.setInterval(self.EVERY_MS)
        self.timer.timeout.connect(self.step)

    def step(self) -> None:
        session, n = self.window.session, self.ledger.ops
        live = self.ledger.live()
        try:
            if live and self.rng.random() < 0.3:
                target = self.rng.choice(live)
                current = session.brain.get(target)
                text = f"app edit {n} of a widget note"
                command = cmd.SaveTraceCommand(session, target, {"content": text}, current.version)
                cmd.push(session, command)
                self.ledger.content[target] = text
            else:
                text = f"app memory {n} about widgets"
                trace = cmd.push(session, cmd.NewTraceCommand(session, {"content": text}))
                self.ledger.content[trace.id] = text
        except MemguiError as exc:
            self.ledger.errors.append(f"app: {exc}")
            self.timer.stop()
            return
        self.ledger.ops += 1


def cli_writer(env: dict[str, str], brain: Path, ledger: Ledger, stop: threading.Event) -> None:
    """`memgui add` as a shell script would run it, CLI_WRITES times (or until told to stop)."""
    while not stop.is_set() and ledger.ops < CLI_WRITES:
        text = f"{ledger.name} shell note {ledger.ops}"
        done = subprocess.run(
            memgui_argv("--brain", str(brain), "--json", "add", text, "--tag", "cli"),
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            ledger.errors.append(done.stderr)
            return
        ledger.content[json.loads(done.stdout)["id"]] = text
        ledger.ops += 1


def test_servers_shell_writers_and_the_app_share_one_brain(qtbot, tmp_path: Path) -> None:
    brain = tmp_path / "brain.sqlite"
    env = server_env(tmp_path)
    with Brain.open(brain) as b:
        b.add("made before the servers start")
    window = open_window(qtbot, tmp_path, brain, live=True, **{URL_KEY: DEAD_OLLAMA})
    messages: list[str] = []
    window.statusBar().messageChanged.connect(messages.append)
    app_ledger = Ledger("app")
    person = AppWriter(window, app_ledger, 7)
    mcp_ledgers = [Ledger(f"mcp{k}") for k in range(MCP_SERVERS)]
    rest_ledger = Ledger("rest")
    cli_ledgers = [Ledger(f"cli{k}") for k in range(CLI_WRITERS)]
    per_client = TOTAL_OPS // (MCP_SERVERS + 1)
    logs = [tmp_path / f"mcp{k}.log" for k in range(MCP_SERVERS)]
    stop_cli = threading.Event()
    writers = [
        threading.Thread(target=cli_writer, args=(env, brain, ledger, stop_cli))
        for ledger in cli_ledgers
    ]
    rest_args = ("--brain", str(brain), "serve-rest", "--addr", "127.0.0.1:0")
    with rest_server(env, *rest_args) as rest:

        async def run_all() -> float:
            ready = anyio.Event()
            started: list[float] = []
            waiting = [MCP_SERVERS + 1]

            async def arrive() -> None:
                waiting[0] -= 1
                if waiting[0] == 0:
                    started.append(time.monotonic())
                    for writer in writers:
                        writer.start()
                    ready.set()
                await ready.wait()

            async def drive(client: Client) -> None:
                await arrive()
                deadline = started[0] + BUDGET_S
                while client.ledger.ops < per_client and time.monotonic() < deadline:
                    await client.step()

            async def mcp_worker(k: int) -> None:
                with logs[k].open("w") as errlog:
                    args = ("--brain", str(brain), "serve-mcp")
                    async with mcp_session(env, *args, client_name=f"soak-{k}", errlog=errlog) as s:
                        await drive(McpClient(mcp_ledgers[k], k, s))

            async def rest_worker() -> None:
                async with httpx.AsyncClient(base_url=rest.url, timeout=120) as http:
                    await drive(RestClient(rest_ledger, 99, http))

            async with anyio.create_task_group() as group:
                for k in range(MCP_SERVERS):
                    group.start_soon(mcp_worker, k)
                group.start_soon(rest_worker)
            return time.monotonic() - started[0]

        # The clients on a thread of their own; this thread runs the window's event loop.
        outcome: dict[str, Any] = {}

        def clients() -> None:
            try:
                outcome["elapsed"] = anyio.run(run_all)
            except BaseException as exc:  # handed to the test's thread
                outcome["error"] = exc

        running = threading.Thread(target=clients)
        running.start()
        person.timer.start()
        qtbot.waitUntil(lambda: not running.is_alive(), timeout=int(BUDGET_S * 1000) + WAIT_MS * 5)
        person.timer.stop()
        stop_cli.set()
        for writer in writers:
            writer.join(timeout=180)
    if "error" in outcome:
        raise outcome["error"]
    elapsed = outcome["elapsed"]
    server_logs = rest.log() + "".join(log.read_text() for log in logs)

    ledgers = [*mcp_ledgers, rest_ledger, *cli_ledgers, app_ledger]
    total = sum(ledger.ops for ledger in ledgers)
    print(f"soak: {total} operations in {elapsed:.1f} s, {app_ledger.ops} of them in the app")
    assert not [e for ledger in ledgers for e in ledger.errors]
    assert all(ledger.ops > 0 for ledger in ledgers), [(lg.name, lg.ops) for lg in ledgers]
    assert total >= min(TOTAL_OPS, 1_000)
    for word in ("locked", "SQLITE_BUSY", "BusyError", "Traceback"):
        assert word not in server_logs, server_logs[-3000:]
        assert not [m for m in messages if word in m or "busy" in m], messages
    with Brain.open(brain, actor="gui") as b:
        everyone = [i for ledger in ledgers for i in ledger.content]
        found = b.get_many(everyone)
        assert set(found) == set(everyone)  # zero lost writes
        for ledger in ledgers:
            for trace_id, text in ledger.content.items():
                trace = found[trace_id]
                assert trace.content == text, (ledger.name, trace_id)
                assert trace.deleted == (trace_id in ledger.forgotten)
        assert b.count() == 1 + sum(len(ledger.live()) for ledger in ledgers)
        actors = {e.actor for e in b.journal_since(0, limit=10_000, states=False)}
        assert {f"mcp:soak-{k}" for k in range(MCP_SERVERS)} | {"rest", "cli"} <= actors
        live_ids = b.list_ids()
        contents = {t.id: t.content for t in b.get_many(live_ids).values()}
        unreviewed = b.unreviewed_count()
    # The app caught up with everything and shows it as it is.
    model = window.model
    qtbot.waitUntil(lambda: not model.busy and model.ids() == live_ids, timeout=WAIT_MS)
    shown = {model.id_at(r): model.trace_at(r).content for r in range(model.rowCount())}
    assert shown == contents
    qtbot.waitUntil(lambda: window.activity.count == unreviewed, timeout=WAIT_MS)
    assert unreviewed > 0
    window.close()
