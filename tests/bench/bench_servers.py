"""Agent calls on a 20k brain: memgui's tools in the server, over stdio and REST, and the
real AgentOS package's tools on the same brain.

    .venv/bin/python -m tests.bench.bench_servers [--traces 20000] [--adds 1000] [--queries 300]

Each contender gets its own copy of one 20k brain (pairs of real sentences, agent-memory
categories). Measured per call, p50 and p95:
- `in_process`: the server's call path with no transport (`ToolService.call_now`);
- `server`: the time a call spends in the server (`$MEMGUI_SERVER_TIMINGS`: the tool call on
  the server's worker thread, argument checks and the SQLite transaction included), while
  it is served over stdio (`serve-mcp`) and over REST (`serve-rest`);
- `round_trip`: what the client waits, over the real transport (the MCP SDK's stdio client;
  httpx on loopback); the difference is the protocol's share;
- `search_floor`: AgentOS's search statement alone, through apsw, on the same brain;
- `agentos`: `tool.execute` of `@framers/agentos` 0.9.164's `memory_add` / `memory_search`
  in process (AgentOS serves them over no transport), on a copy of the same brain.
Ollama is down (a dead port): memgui searches in keyword mode, as AgentOS's tool always does.
memgui's agent-memory `memory_search` notes the recall of each result it returns (a write);
its agentos-profile `memory_search` is the read-only counterpart of AgentOS's.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from memgui.core.brain import Brain
from memgui.core.model import CATEGORIES
from tests.bench.bench_core import SENTENCES, WORDS, sentence
from tests.bench.common import emit, percentiles
from tests.interop.npm_env import ensure_agentos
from tests.support.servers import mcp_session, rest_server, server_env

AGENTOS_SCRIPT = Path(__file__).with_name("agentos_tools_bench.mjs")
WARMUP = 20
STORE_TARGET_MS = 3.0  # memory_store round trip over stdio, p50


def build(path: Path, count: int, rng: random.Random) -> None:
    with Brain.open(path, actor="bench") as brain:
        done = 0
        while done < count:
            with brain.batch(actor="bench"):
                for _ in range(min(20_000, count - done)):
                    brain.add(sentence(rng), category=rng.choice(CATEGORIES),
                              tags=[rng.choice(WORDS)])  # fmt: skip
                    done += 1
        brain.flush_index()


def workload(rng: random.Random, adds: int, queries: int) -> dict[str, list[str]]:
    import re

    def query() -> str:
        words = re.findall(r"[A-Za-z]{4,}", rng.choice(SENTENCES))
        return " ".join(rng.sample(words, min(2, len(words))))

    return {
        "adds": [sentence(rng) for _ in range(adds + WARMUP)],
        "queries": [query() for _ in range(queries + WARMUP)],
    }


def summary(samples: list[float]) -> dict[str, float]:
    return percentiles(samples[WARMUP:] if len(samples) > WARMUP else samples)


# --- memgui in process, over stdio and over REST ---------------------------------------------


def in_process(brain: Path, work: dict[str, list[str]], profile: str) -> dict:
    """The server's own call path (`ToolService.call_now` on its worker's connection) with no
    transport around it: the counterpart of AgentOS's `tool.execute`."""
    from memgui.server.runtime import ServerOptions, ToolService

    options = ServerOptions(brain, None, "http://127.0.0.1:9", "nomic-embed-text",
                            profile=profile, maintenance_interval=86_400)  # fmt: skip
    service = ToolService(options, actor="bench").start()
    assert service.maintainer is not None  # a brain file has its upkeep
    service.maintainer.wait_for_ticks(1, 120)  # it learns whether the brain has vectors
    store_tool = "memory_store" if profile == "agent-memory" else "memory_add"
    kind = "PATTERN" if profile == "agent-memory" else "semantic"
    samples: dict[str, list[float]] = {store_tool: [], "memory_search": []}
    try:
        for content in work["adds"]:
            start = time.perf_counter()
            service.call_now(store_tool, {"content": content, "type": kind}, "bench", True)
            samples[store_tool].append(time.perf_counter() - start)
        for query in work["queries"]:
            start = time.perf_counter()
            result = service.call_now("memory_search", {"query": query, "limit": 10}, "bench", True)
            samples["memory_search"].append(time.perf_counter() - start)
            if result.after is not None:
                result.after()  # the recall, written after the answer as the servers do
    finally:
        service.close()
    return {tool: {"server": summary(values)} for tool, values in samples.items()}


# --- memgui over stdio and REST ----------------------------------------------------------------


def over_stdio(brain: Path, work: dict[str, list[str]], folder: Path, profile: str) -> dict:
    timings = folder / f"stdio-{profile}.json"
    env = server_env(folder, MEMGUI_SERVER_TIMINGS=str(timings))
    store_tool, search_tool = (
        ("memory_store", "memory_search") if profile == "agent-memory" else
        ("memory_add", "memory_search")
    )  # fmt: skip
    trips: dict[str, list[float]] = {store_tool: [], search_tool: []}

    async def run() -> None:
        args = ("--brain", str(brain), "serve-mcp", "--profile", profile,
                "--maintenance-interval", "86400")  # fmt: skip
        with (folder / f"stdio-{profile}.log").open("w") as errlog:
            async with mcp_session(env, *args, client_name="bench", errlog=errlog) as session:
                for content in work["adds"]:
                    args_ = {"content": content, "type": "PATTERN" if profile == "agent-memory"
                             else "semantic"}  # fmt: skip
                    start = time.perf_counter()
                    result = await session.call_tool(store_tool, args_)
                    trips[store_tool].append(time.perf_counter() - start)
                    assert not result.is_error
                for query in work["queries"]:
                    start = time.perf_counter()
                    result = await session.call_tool(search_tool, {"query": query, "limit": 10})
                    trips[search_tool].append(time.perf_counter() - start)
                    assert not result.is_error

    anyio.run(run)
    server = json.loads(timings.read_text())
    return {
        tool: {"server": summary(server[tool]), "round_trip": summary(trips[tool])}
        for tool in trips
    }


def over_rest(brain: Path, work: dict[str, list[str]], folder: Path) -> dict:
    timings = folder / "rest.json"
    env = server_env(folder, MEMGUI_SERVER_TIMINGS=str(timings))
    trips: dict[str, list[float]] = {"memory_store": [], "memory_search": []}
    args = ("--brain", str(brain), "serve-rest", "--addr", "127.0.0.1:0",
            "--maintenance-interval", "86400")  # fmt: skip
    # TCP_NODELAY, as curl sets it: without it the client holds a POST's body back until the
    # server acknowledges its headers, which Linux delays by up to 40 ms.
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with (
        rest_server(env, *args) as server,
        httpx.Client(base_url=server.url, transport=nodelay) as http,
    ):
        for content in work["adds"]:
            start = time.perf_counter()
            answer = http.post("/api/memories", json={"content": content, "type": "PATTERN"})
            trips["memory_store"].append(time.perf_counter() - start)
            assert answer.status_code == 201
        for query in work["queries"]:
            start = time.perf_counter()
            answer = http.post("/api/search", json={"query": query, "limit": 10})
            trips["memory_search"].append(time.perf_counter() - start)
            assert answer.status_code == 200
    server_side = json.loads(timings.read_text())
    return {
        tool: {"server": summary(server_side[tool]), "round_trip": summary(trips[tool])}
        for tool in trips
    }


# --- the floor: AgentOS's own search statement, alone --------------------------------------

AGENTOS_SEARCH_SQL = (  # MemorySearchTool's statement, as the package runs it (limit 10)
    "SELECT mt.id, mt.content, mt.type, mt.scope, mt.strength, mt.tags "
    "FROM memory_traces_fts fts JOIN memory_traces mt ON mt.rowid = fts.rowid "
    "WHERE memory_traces_fts MATCH ? AND mt.deleted = 0 ORDER BY rank LIMIT ?"
)


def search_floor(brain: Path, work: dict[str, list[str]]) -> dict[str, Any]:
    """The statement AgentOS's `memory_search` runs, through apsw on the same brain with no
    code around it: what any search that ranks every match by FTS5's bm25 pays at least."""
    import apsw

    from memgui.core.search.textindex import natural_language_query

    conn = apsw.Connection(str(brain), flags=apsw.SQLITE_OPEN_READONLY)
    samples = []
    try:
        for query in work["queries"]:
            start = time.perf_counter()
            try:
                conn.execute(AGENTOS_SEARCH_SQL, (query, 10)).fetchall()
            except apsw.SQLError:  # as the tool does: the rewrite on a syntax error
                conn.execute(AGENTOS_SEARCH_SQL, (natural_language_query(query), 10)).fetchall()
            samples.append(time.perf_counter() - start)
    finally:
        conn.close()
    return {"memory_search": {"server": summary(samples)}}


# --- the real AgentOS --------------------------------------------------------------------------


def agentos(brain: Path, work: dict[str, list[str]], folder: Path) -> dict[str, Any]:
    env = ensure_agentos()
    if env.prefix is None:
        return {"skipped": env.skip_reason}
    work_file = folder / "agentos-work.json"
    work_file.write_text(json.dumps(work))
    done = subprocess.run(
        ["node", str(AGENTOS_SCRIPT), str(brain), "brain", str(work_file)],
        capture_output=True, text=True, env=env.probe_env(), timeout=3600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return {"skipped": f"the AgentOS run failed: {done.stderr[-2000:]}"}
    samples = json.loads(done.stdout)
    return {
        "memory_add": {"server": summary(samples["memory_add"])},
        "memory_search": {"server": summary(samples["memory_search"])},
        "search_hits": samples["hits"],
    }


def comparisons(results: dict[str, Any]) -> dict[str, Any]:
    """memgui against AgentOS, server side, and the stdio store target."""
    out: dict[str, Any] = {}
    peer = results.get("agentos", {})
    pairs = (
        ("store", ("in_process_agent_memory", "memory_store"), ("in_process_agentos", "memory_add"),
         ("stdio_agent_memory", "memory_store"), ("rest", "memory_store"),
         ("stdio_agentos", "memory_add"), "memory_add"),
        ("search", ("in_process_agent_memory", "memory_search"),
         ("in_process_agentos", "memory_search"), ("stdio_agent_memory", "memory_search"),
         ("rest", "memory_search"), ("stdio_agentos", "memory_search"), "memory_search"),
    )  # fmt: skip
    for label, *ours, theirs in pairs:
        if theirs not in peer:
            continue
        their_p50 = peer[theirs]["server"]["p50_ms"]
        for where, tool in ours:
            mine = results[where][tool]["server"]["p50_ms"]
            out[f"{label}_{where}_p50_vs_agentos"] = {
                "memgui_ms": mine, "agentos_ms": their_p50,
                "memgui_faster": mine < their_p50, "ratio": round(their_p50 / mine, 2),
            }  # fmt: skip
    store = results["stdio_agent_memory"]["memory_store"]
    out["stdio_store_round_trip_p50_ms"] = store["round_trip"]["p50_ms"]
    out["stdio_store_protocol_overhead_p50_ms"] = round(
        store["round_trip"]["p50_ms"] - store["server"]["p50_ms"], 3
    )
    out["stdio_store_target_met"] = store["round_trip"]["p50_ms"] <= STORE_TARGET_MS
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--adds", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--skip-agentos", action="store_true")
    options = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="memgui-bench-servers-") as tmp:
        folder = Path(tmp)
        master = folder / "master.sqlite"
        build(master, options.traces, rng)
        work = workload(rng, options.adds, options.queries)

        def copy(name: str) -> Path:
            target = folder / name / "brain.sqlite"
            target.parent.mkdir()
            shutil.copyfile(master, target)
            return target

        results: dict[str, Any] = {"traces": options.traces, "adds": options.adds,
                                   "queries": options.queries}  # fmt: skip
        results["in_process_agent_memory"] = in_process(copy("inproc"), work, "agent-memory")
        results["in_process_agentos"] = in_process(copy("inproc-agentos"), work, "agentos")
        results["stdio_agent_memory"] = over_stdio(copy("stdio"), work, folder, "agent-memory")
        results["stdio_agentos"] = over_stdio(copy("stdio-agentos"), work, folder, "agentos")
        results["rest"] = over_rest(copy("rest"), work, folder)
        results["search_floor"] = search_floor(master, work)
        if not options.skip_agentos:
            results["agentos"] = agentos(copy("agentos"), work, folder)
        results["comparisons"] = comparisons(results)
        results["cpu_count"] = os.cpu_count()
    emit("servers", results)


if __name__ == "__main__":
    main()
