"""Each operation AgentOS's tools do, memgui's against the real AgentOS's, in one run.

    .venv/bin/python -m tests.bench.bench_agentos_ops [--sizes 5000 20000] [--ops 200]
        [--rounds 2]

For each of `--sizes`, one brain (bench_servers' sentences, categories and tags; brain id
"brain") is built once; each round works on two fresh copies of it, one per side, with the
same work: `--ops` adds, two-word searches (limit 10), updates of a trace's text and
deletes, each op on its own trace (the same ids on both sides), in that order, plus
bench_servers' warm-up calls left out of the samples. memgui runs the agentos profile's
tools in process (`ToolService.call_now`, with the bookkeeping a server runs after the
answer), AgentOS 0.9.164 its `memory_add`, `memory_search`, `memory_update` and
`memory_delete` tools in process (tests/bench/agentos_tools_bench.mjs); the order of the
two alternates by round. `ratio_p50` is AgentOS's p50 over memgui's: above 1, memgui is
faster. Imports are measured against AgentOS by bench_import.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from tests.bench.bench_core import sentence
from tests.bench.bench_keyword import asked, timed_each
from tests.bench.bench_servers import AGENTOS_SCRIPT, WARMUP, build
from tests.bench.common import agentos_service, call_tool, emit, percentiles
from tests.interop.npm_env import ensure_agentos

OPS = ("memory_add", "memory_search", "memory_update", "memory_delete")


def work_for(master: Path, ops: int, rng: random.Random) -> dict[str, Any]:
    count = ops + WARMUP
    with Brain.open(master) as brain:
        ids = brain.list_ids()
    picked = rng.sample(ids, 2 * count)
    return {
        "adds": [sentence(rng) for _ in range(count)],
        "queries": (asked() * (1 + count // 200))[:count],
        "updates": [{"traceId": i, "content": sentence(rng)} for i in picked[:count]],
        "deletes": picked[count:],
    }


def memgui_round(path: Path, work: dict[str, Any]) -> dict[str, list[float]]:
    with agentos_service(path) as service:

        def tool(name: str) -> Callable[[Any], None]:
            def call(arguments: Any) -> None:
                if not call_tool(service, name, arguments).found:  # each op's trace is there
                    raise RuntimeError(f"{name} found nothing: {arguments}")

            return call

        return {
            "memory_add": timed_each(tool("memory_add"), [{"content": c} for c in work["adds"]]),
            "memory_search": timed_each(
                tool("memory_search"), [{"query": q, "limit": 10} for q in work["queries"]]
            ),
            "memory_update": timed_each(tool("memory_update"), work["updates"]),
            "memory_delete": timed_each(
                tool("memory_delete"), [{"traceId": i} for i in work["deletes"]]
            ),
        }


def agentos_round(path: Path, work: dict[str, Any], folder: Path) -> dict[str, list[float]] | str:
    env = ensure_agentos()
    if env.prefix is None:
        return f"skipped: {env.skip_reason}"
    work_file = folder / "agentos-work.json"
    work_file.write_text(json.dumps(work))
    done = subprocess.run(
        ["node", str(AGENTOS_SCRIPT), str(path), "brain", str(work_file)],
        capture_output=True, text=True, env=env.probe_env(), timeout=3600, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        return f"the AgentOS run failed: {done.stderr[-2000:]}"
    samples = json.loads(done.stdout)
    return {name: samples[name][WARMUP:] for name in OPS}


def size_run(size: int, ops: int, rounds: int, folder: Path) -> dict[str, Any]:
    master = folder / f"master-{size}" / "brain.sqlite"
    master.parent.mkdir()
    build(master, size, random.Random(7))
    work = work_for(master, ops, random.Random(11))
    samples: dict[str, dict[str, list[float]]] = {"memgui": {}, "agentos": {}}
    skipped = None
    for n in range(rounds):
        for who in ("memgui", "agentos") if n % 2 == 0 else ("agentos", "memgui"):
            if who == "agentos" and skipped is not None:
                continue
            copy = folder / f"{who}-{size}-{n}" / "brain.sqlite"
            copy.parent.mkdir()
            shutil.copyfile(master, copy)
            got = memgui_round(copy, work) if who == "memgui" else agentos_round(copy, work, folder)
            if isinstance(got, str):
                skipped = got
                continue
            for name, values in got.items():
                samples[who].setdefault(name, []).extend(values)
    out: dict[str, Any] = {"traces": size}
    for name in OPS:
        ours = percentiles(samples["memgui"][name])
        row: dict[str, Any] = {"memgui_tool": ours}
        if skipped is None:
            theirs = percentiles(samples["agentos"][name])
            ratio = round(theirs["p50_ms"] / ours["p50_ms"], 2)
            row.update(agentos_tool=theirs, ratio_p50=ratio, memgui_faster=ratio > 1)
        out[name] = row
    if skipped is not None:
        out["agentos_tool"] = skipped
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memgui-agentos-ops-"))
    try:
        results = {str(s): size_run(s, args.ops, args.rounds, folder) for s in args.sizes}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ratios = {size: {name: r[name].get("ratio_p50") for name in OPS} for size, r in results.items()}
    emit("agentos_ops", {"ops": args.ops, "rounds": args.rounds, "sizes": results,
                         "ratios_p50": ratios})  # fmt: skip


if __name__ == "__main__":
    main()
