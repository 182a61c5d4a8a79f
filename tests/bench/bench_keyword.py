"""Keyword search: against the real AgentOS on small brains, exact and near its floor on big ones.

    .venv/bin/python -m tests.bench.bench_keyword [--sizes 5000 20000] [--rounds 2]
        [--big 0 | --brain PATH] [--skip-agentos]

For each of `--sizes`, one brain (pairs of real sentences, agent-memory categories, as
bench_servers builds it) answers bench_search_floor's 200 two-word queries (limit 10):
- `memgui_search`: `brain.search(…, mode="keyword", record_recall=False)`;
- `memgui_tool`: the agentos profile's `memory_search` in process (`ToolService.call_now`),
  the counterpart of AgentOS's tool;
- `memgui_ranking_statement`: the ranking statement alone on `memgui_fts` (FTS5's best 2 ×
  limit by `ORDER BY bm25(…)`), through apsw with no memgui code around it;
- `agentos_tool`: `tool.execute` of `@framers/agentos` 0.9.164's `memory_search` in process
  (tests/bench/agentos_tools_bench.mjs) on a copy of the same brain.
The contenders take turns, the order alternated each round; each round's first 20 calls are
left out (warm-up). The ratio is AgentOS's p50 over memgui's (above 1: memgui is faster).

`--big N` builds a brain of N traces as bench_core does (or `--brain PATH` opens one, e.g.
kept from bench_search_floor); there `brain.search(…, limit=20)` and the exact-bm25 floor
(FTS5's best 20 by `ORDER BY bm25(…)`, no row read) run query by query, interleaved, so the
machine's load falls on both alike (wall time, and the thread's CPU time). At every size
each query's top k is checked against the exact ranking: every match by FTS5's own bm25
(the brain opened again without memgui_bm25) with its trace's strength (−bm25 + strength),
best first. With memgui_bm25 built (search/bm25.py), the floors are also timed ranked by it
(`c_floor`, `c_stems_floor`: the same statements, as the search ranks).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import bm25, stems
from memgui.core.search.keyword import keyword_ranking
from tests.bench.bench_core import fill
from tests.bench.bench_search_floor import fts_query, queries
from tests.bench.bench_servers import AGENTOS_SCRIPT, WARMUP, build
from tests.bench.common import agentos_service, call_tool, emit, percentiles
from tests.interop.npm_env import ensure_agentos

SMALL_LIMIT, BIG_LIMIT = 10, 20
P50_TARGET_MS, P95_TARGET_MS, FLOOR_RATIO_TARGET = 5.0, 40.0, 1.5
FLOOR_SQL = (
    "SELECT rowid, bm25(memgui_fts) AS score FROM memgui_fts WHERE memgui_fts MATCH ? "
    "ORDER BY score, rowid LIMIT ?"
)
# The same on the stemmed index (schema 9) with the query it is asked: the exact-bm25 floor
# of what a plain-word search ranks now.
STEMS_FLOOR_SQL = FLOOR_SQL.replace("memgui_fts", "memgui_stems")
# Both again ranked by memgui_bm25 (search/bm25.py), as the search ranks when it is built.
C_FLOOR_SQL = (
    FLOOR_SQL.replace("bm25(memgui_fts)", "memgui_bm25(memgui_fts, 'memgui_fts', ?1, ?2)")
    .replace("MATCH ?", "MATCH ?1")
    .replace("LIMIT ?", "LIMIT ?2")
)
C_STEMS_FLOOR_SQL = C_FLOOR_SQL.replace("memgui_fts", "memgui_stems")


def asked() -> list[str]:
    return [" ".join(words) for words in queries()]


def exact_top(brain: Brain, query: str, limit: int) -> list[str]:
    """The best `limit` by −bm25 + strength over every match (the joined statement: a
    trace row read per match)."""
    every = keyword_ranking(brain, query, TraceFilter(), 10**9)
    return [h.id for h in sorted(every, key=lambda h: (-(-h.bm25 + h.strength), h.id))[:limit]]


@contextmanager
def fts5_ranked(path: Path) -> Iterator[Brain]:
    """The brain opened again with FTS5's own bm25 ranking (memgui_bm25 not loaded)."""
    os.environ[bm25.DISABLE_ENV] = "fts5"
    try:
        reference = Brain.open(path)
    finally:
        del os.environ[bm25.DISABLE_ENV]
    with reference:
        assert not bm25.available(reference.db.conn)
        yield reference


def exactness(brain: Brain, work: list[str], limit: int) -> dict[str, Any]:
    """Each query's top k against the exact ranking by FTS5's own bm25."""
    exact = 0
    with fts5_ranked(brain.db.path) as reference:
        for query in work:
            found = brain.search(query, limit=limit, mode="keyword", record_recall=False)
            exact += [t.id for t in found.traces] == exact_top(reference, query, limit)
    return {
        "queries": len(work),
        "exact_top_k": exact,
        "ranked_by": bm25.FUNCTION if bm25.available(brain.db.conn) else "bm25",
        "against": "bm25 (FTS5's own, every match)",
    }


def timed_each(call: Callable[[str], object], work: list[str]) -> list[float]:
    samples = []
    for query in work:
        start = time.perf_counter()
        call(query)
        samples.append(time.perf_counter() - start)
    return samples[WARMUP:]


def memgui_rounds(path: Path, work: list[str]) -> dict[str, list[float]]:
    """One round of `brain.search` and of the agentos profile's tool, in process."""
    out: dict[str, list[float]] = {}
    with Brain.open(path) as brain:
        search, conn = brain.search, brain.db.conn
        out["memgui_search"] = timed_each(
            lambda q: search(q, limit=SMALL_LIMIT, mode="keyword", record_recall=False), work
        )
        # The ranking statement alone (the 2 × limit candidates), no memgui code around it.
        out["memgui_ranking_statement"] = timed_each(
            lambda q: conn.execute(FLOOR_SQL, (fts_query(q.split()), 2 * SMALL_LIMIT)).fetchall(),
            work,
        )
    with agentos_service(path) as service:
        out["memgui_tool"] = timed_each(
            lambda q: call_tool(service, "memory_search", {"query": q, "limit": SMALL_LIMIT}),
            work,
        )
    return out


def agentos_round(path: Path, work: list[str], folder: Path) -> list[float] | str:
    """One round of AgentOS's `memory_search` tool (a node process); why not, as text."""
    env = ensure_agentos()
    if env.prefix is None:
        return f"skipped: {env.skip_reason}"
    work_file = folder / "agentos-work.json"
    work_file.write_text(json.dumps({"adds": [], "queries": work}))
    done = subprocess.run(
        ["node", str(AGENTOS_SCRIPT), str(path), "brain", str(work_file)],
        capture_output=True, text=True, env=env.probe_env(), timeout=1800, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return f"the AgentOS run failed: {done.stderr[-2000:]}"
    samples: list[float] = json.loads(done.stdout)["memory_search"]
    return samples[WARMUP:]


def small(size: int, rounds: int, folder: Path, skip_agentos: bool) -> dict[str, Any]:
    master = folder / f"memgui-{size}" / "brain.sqlite"  # brain id "brain", as AgentOS is told
    master.parent.mkdir()
    build(master, size, random.Random(7))
    peer = folder / f"agentos-{size}" / "brain.sqlite"
    peer.parent.mkdir()
    shutil.copyfile(master, peer)
    work = asked()
    work = work[:WARMUP] + work  # the warm-up calls, left out of the samples
    samples: dict[str, list[float]] = {
        "memgui_search": [], "memgui_ranking_statement": [], "memgui_tool": [], "agentos_tool": []
    }  # fmt: skip
    skipped = None
    for n in range(rounds):
        order = ("memgui", "agentos") if n % 2 == 0 else ("agentos", "memgui")
        for who in order:
            if who == "memgui":
                for name, values in memgui_rounds(master, work).items():
                    samples[name] += values
            elif not skip_agentos and skipped is None:
                got = agentos_round(peer, work, folder)
                if isinstance(got, str):
                    skipped = got
                else:
                    samples["agentos_tool"] += got
    out: dict[str, Any] = {n: percentiles(v) for n, v in samples.items() if v}
    if skipped or skip_agentos:
        out["agentos_tool"] = skipped or "skipped (--skip-agentos)"
    else:
        theirs = out["agentos_tool"]["p50_ms"]
        for name in ("memgui_search", "memgui_tool"):
            ratio = round(theirs / out[name]["p50_ms"], 2)
            out[f"{name}_vs_agentos"] = {"ratio_p50": ratio, "memgui_faster": ratio > 1}
    with Brain.open(master) as brain:
        out["exactness"] = exactness(brain, asked(), SMALL_LIMIT)
    return out


FLOORS = ("memgui", "floor", "c_floor", "stems_floor", "c_stems_floor")


def big(brain: Brain, rounds: int) -> dict[str, Any]:
    """`brain.search` against the exact-bm25 floor, query by query, interleaved."""
    conn = brain.db.conn
    work = asked()
    stemmed = "memgui_stems" in brain.db.tables
    ranked_in_c = bm25.available(conn)
    samples: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for n in range(rounds):
        samples = {name: [] for name in FLOORS}
        cpu = {name: [] for name in FLOORS}
        for query in work:
            calls = [
                ("memgui", lambda q=query: brain.search(
                    q, limit=BIG_LIMIT, mode="keyword", record_recall=False)),
                ("floor", lambda q=query: conn.execute(
                    FLOOR_SQL, (fts_query(q.split()), BIG_LIMIT)).fetchall()),
            ]  # fmt: skip
            if ranked_in_c:
                calls.append(("c_floor", lambda q=query: conn.execute(
                    C_FLOOR_SQL, (fts_query(q.split()), BIG_LIMIT)).fetchall()))  # fmt: skip
            if stemmed:
                calls.append(("stems_floor", lambda q=query: conn.execute(
                    STEMS_FLOOR_SQL, (stems.match(q), BIG_LIMIT)).fetchall()))  # fmt: skip
            if stemmed and ranked_in_c:
                calls.append(("c_stems_floor", lambda q=query: conn.execute(
                    C_STEMS_FLOOR_SQL, (stems.match(q), BIG_LIMIT)).fetchall()))  # fmt: skip
            for name, call in calls if n % 2 == 0 else reversed(calls):
                start, cpu_start = time.perf_counter(), time.thread_time()
                call()
                samples[name].append(time.perf_counter() - start)
                cpu[name].append(time.thread_time() - cpu_start)
    mine, base = percentiles(samples["memgui"]), percentiles(samples["floor"])  # warm cache
    out: dict[str, Any] = {
        "traces": conn.execute("SELECT count(*) FROM memory_traces").fetchone()[0],
        "memgui_search_limit_20": mine,
        "exact_bm25_floor_limit_20": base,
        "ratio_to_floor": {
            "p50": round(mine["p50_ms"] / base["p50_ms"], 2),
            "p95": round(mine["p95_ms"] / base["p95_ms"], 2),
        },
        # The thread's CPU time: what the load on the machine does not add.
        "cpu_memgui_search": percentiles(cpu["memgui"]),
        "cpu_exact_bm25_floor": percentiles(cpu["floor"]),
    }
    if stemmed:
        stems_base = percentiles(samples["stems_floor"])
        out["stems_floor_limit_20"] = stems_base
        out["cpu_stems_floor"] = percentiles(cpu["stems_floor"])
        out["ratio_to_stems_floor"] = {
            "p50": round(mine["p50_ms"] / stems_base["p50_ms"], 2),
            "p95": round(mine["p95_ms"] / stems_base["p95_ms"], 2),
        }
    for name in ("c_floor", "c_stems_floor"):
        if samples[name]:  # the floors ranked by memgui_bm25, which the search runs
            out[f"{name}_limit_20"] = percentiles(samples[name])
            out[f"cpu_{name}"] = percentiles(cpu[name])
    out["ranked_by"] = bm25.FUNCTION if ranked_in_c else "bm25 (FTS5's; memgui_bm25 not built)"
    out["targets_met"] = {
        "p50_ms_le_5": mine["p50_ms"] <= P50_TARGET_MS,
        "p95_ms_le_40": mine["p95_ms"] <= P95_TARGET_MS,
        "p50_le_1_5x_floor": out["ratio_to_floor"]["p50"] <= FLOOR_RATIO_TARGET,
    }
    out["exactness"] = exactness(brain, work, BIG_LIMIT)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[5_000, 20_000])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--big", type=int, default=0, help="traces of the big brain (0: none)")
    parser.add_argument("--brain", type=Path, help="a big brain built before (read as is)")
    parser.add_argument("--skip-agentos", action="store_true")
    options = parser.parse_args()
    results: dict[str, Any] = {"queries": len(asked()), "rounds": options.rounds}
    with tempfile.TemporaryDirectory(prefix="memgui-bench-keyword-") as tmp:
        folder = Path(tmp)
        for size in options.sizes:
            results[f"small_{size}"] = small(size, options.rounds, folder, options.skip_agentos)
        if options.brain is not None:
            with Brain.open(options.brain) as brain:
                results["big"] = big(brain, options.rounds)
        elif options.big:
            with Brain.open(folder / "big.sqlite") as brain:
                fill(brain, options.big, random.Random(4))
                results["big"] = big(brain, options.rounds)
    emit("keyword", results)


if __name__ == "__main__":
    main()
