"""The agent's search after a burst of adds: memgui's tool against AgentOS's, query by query.

    .venv/bin/python -m tests.bench.bench_agentos_search [--sizes 5000 20000] [--adds 220]
        [--rounds 8]

The search of `make bench-agentos` (bench_agentos_ops), with the machine's phases cancelled
finely. For each of `--sizes`, one brain (bench_servers' sentences, as that pair builds it)
and two copies, each given the same `--adds` single adds by its own side and left as those
adds leave it: memgui's through the agentos profile's `memory_add` in a `ToolService` (its
upkeep running, as a server runs it), AgentOS's through its own `memory_add` tool. Then
`--rounds` rounds (after one to warm up) of bench_keyword's 200 two-word queries (limit
10), each query searched by the three below in turn, the order turning query by query:
- `agentos_tool`: AgentOS 0.9.164's `memory_search` in one node process kept open
  (tests/bench/agentos_search_serve.mjs; asked over a pipe, timed in node);
- `agentos_statement`: the statement that tool runs, through better-sqlite3, same process;
- `memgui_tool`: memgui's `memory_search` in process (`tools.call`), with no document count
  kept from the round before (every query of the pair is new to its process).
p50 µs of each round, their median, and `ratio` = AgentOS's tool over memgui's (above 1:
memgui is faster). The segments of each side's index after the adds are reported.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw

from memgui.core.brain import Brain
from memgui.core.search import fts_merge, keyword, stems
from memgui.core.tools import ToolContext, call, profile
from tests.bench.bench_agentos_ops import agentos_round
from tests.bench.bench_core import sentence
from tests.bench.bench_keyword import asked
from tests.bench.bench_search_pieces import forget_document_counts
from tests.bench.bench_servers import build
from tests.bench.common import agentos_service, call_tool, emit
from tests.interop.npm_env import ensure_agentos

SERVE_SCRIPT = Path(__file__).with_name("agentos_search_serve.mjs")
TOOLS = profile("agentos")
KINDS = ("agentos_tool", "agentos_statement", "memgui_tool")


def memgui_after_adds(path: Path, adds: list[str]) -> None:
    with agentos_service(path) as service:
        for content in adds:
            call_tool(service, "memory_add", {"content": content})


def segments(path: Path, table: str) -> list[tuple[int, ...]]:
    """Each level of `table`, lowest first: (segments merging, segments, pages)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(level) for level in fts_merge.levels(conn, table)]
    finally:
        conn.close()


def memgui_once(ctx: ToolContext, query: str) -> float:
    start = time.perf_counter()
    call(ctx, TOOLS, "memory_search", {"query": query, "limit": 10})
    return (time.perf_counter() - start) * 1e6


def agentos_once(node: subprocess.Popen[str], kind: str, index: int) -> float:
    assert node.stdin is not None and node.stdout is not None
    node.stdin.write(f"{kind.removeprefix('agentos_')} {index}\n")
    node.stdin.flush()
    return float(node.stdout.readline())


def rounds_run(
    node: subprocess.Popen[str], brain: Brain, queries: list[str], rounds: int
) -> dict[str, list[float]]:
    """The p50 µs of each kind in each round (after one to warm the pages and statements):
    each query searched by the three in turn, the order turning query by query."""
    ctx = ToolContext(brain, "bench", "keyword")
    samples: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for round_ in range(rounds + 1):
        keyword._last_ranking.clear()
        forget_document_counts(brain.db.path)  # another connection's commit: counted anew
        times: dict[str, list[float]] = {kind: [] for kind in KINDS}
        for index, query in enumerate(queries):
            for turn in range(len(KINDS)):
                kind = KINDS[(index + round_ + turn) % len(KINDS)]
                if kind == "memgui_tool":
                    times[kind].append(memgui_once(ctx, query))
                else:
                    times[kind].append(agentos_once(node, kind, index))
        if round_:
            for kind in KINDS:
                samples[kind].append(round(statistics.median(times[kind]), 1))
    return samples


def size_run(size: int, adds: int, rounds: int, folder: Path) -> dict[str, Any]:
    master = folder / f"master-{size}.sqlite"
    build(master, size, random.Random(7))
    rng = random.Random(11)
    contents = [sentence(rng) for _ in range(adds)]
    queries = asked()
    ours, theirs = folder / f"memgui-{size}.sqlite", folder / f"agentos-{size}.sqlite"
    shutil.copyfile(master, ours)
    shutil.copyfile(master, theirs)
    memgui_after_adds(ours, contents)
    work = {"adds": contents, "queries": queries[:1], "updates": [], "deletes": []}
    skipped = agentos_round(theirs, work, folder)
    if isinstance(skipped, str):
        return {"traces": size, "skipped": skipped}
    out: dict[str, Any] = {
        "traces": size,
        "segments_after_adds": {
            "memgui_stems": segments(ours, stems.TABLE),
            "memory_traces_fts (AgentOS's)": segments(theirs, fts_merge.AGENTOS_TABLE),
        },
    }
    queries_file = folder / "queries.json"
    queries_file.write_text(json.dumps(queries))
    env = ensure_agentos()
    node = subprocess.Popen(
        ["node", str(SERVE_SCRIPT), str(theirs), "brain", str(queries_file)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env.probe_env(),
    )  # fmt: skip
    assert node.stdin is not None and node.stdout is not None
    try:
        if node.stdout.readline().strip() != "ready":
            raise RuntimeError("the AgentOS search process did not start")
        with Brain.open(ours, actor="bench", create=False) as brain:
            samples = rounds_run(node, brain, queries, rounds)
    finally:
        node.stdin.close()
        node.wait(timeout=60)
    medians = {kind: round(statistics.median(values), 1) for kind, values in samples.items()}
    out.update(rounds_p50_us=samples, median_p50_us=medians,
               ratio=round(medians["agentos_tool"] / medians["memgui_tool"], 2))  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--adds", type=int, default=220)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memgui-agentos-search-"))
    try:
        results = {str(s): size_run(s, args.adds, args.rounds, folder) for s in args.sizes}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    emit("agentos_search", {"adds": args.adds, "rounds": args.rounds, "sizes": results})


if __name__ == "__main__":
    main()
