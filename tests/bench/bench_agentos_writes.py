"""The agent's writes, memgui's tools against AgentOS's, op by op.

    .venv/bin/python -m tests.bench.bench_agentos_writes [--sizes 5000 20000] [--ops 400]

The adds, updates and deletes of `make bench-agentos` (bench_agentos_ops), with the
machine's phases cancelled finely: there each side runs its 200 ops of a kind in a batch
(the order of the sides turning by round), and a phase of the machine can fall on one
side's batch. Here, for each of `--sizes`, one brain (bench_servers' sentences) and two
copies, one per side; AgentOS 0.9.164's tools in one node process kept open
(tests/bench/agentos_ops_serve.mjs, asked op by op over a pipe, timed in node), memgui's
agentos profile in process as a server runs it (`ToolService.call_now`, its upkeep
running, the bookkeeping after the answer included); `--ops` adds, then as many updates of
a trace's text, then as many deletes (each op on its own trace, the same ids on both
sides), each op done by the two in turn, the first turning op by op, after warm-up ops
left out of the samples. p50/p95/max in ms of each side and `ratio_p50` = AgentOS's p50
over memgui's (above 1: memgui is faster).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.bench.bench_agentos_ops import work_for
from tests.bench.bench_servers import WARMUP, build
from tests.bench.common import agentos_service, call_tool, emit, percentiles
from tests.interop.npm_env import ensure_agentos

SERVE_SCRIPT = Path(__file__).with_name("agentos_ops_serve.mjs")
# (op as the node process names it, memgui's tool, the work list, its arguments)
OPS = (
    ("add", "memory_add", "adds", lambda item: {"content": item}),
    ("update", "memory_update", "updates", lambda item: dict(item)),
    ("delete", "memory_delete", "deletes", lambda item: {"traceId": item}),
)


def agentos_once(node: subprocess.Popen[str], op: str, index: int) -> float:
    assert node.stdin is not None and node.stdout is not None
    node.stdin.write(f"{op} {index}\n")
    node.stdin.flush()
    answer = node.stdout.readline()
    if not answer:
        raise RuntimeError(f"the AgentOS process ended at {op} {index}")
    return float(answer) / 1e6


def memgui_once(service: Any, tool: str, arguments: dict[str, Any]) -> float:
    start = time.perf_counter()
    if not call_tool(service, tool, arguments).found:  # each op's trace is there
        raise RuntimeError(f"{tool} found nothing: {arguments}")
    return time.perf_counter() - start


def size_run(size: int, ops: int, folder: Path) -> dict[str, Any]:
    env = ensure_agentos()
    if env.prefix is None:
        return {"traces": size, "skipped": env.skip_reason}
    # Each file named brain.sqlite: its brain id is "brain", the one AgentOS's side opens.
    master, ours, theirs = (folder / f"{who}-{size}" / "brain.sqlite"
                            for who in ("master", "memgui", "agentos"))  # fmt: skip
    for path in (master, ours, theirs):
        path.parent.mkdir()
    build(master, size, random.Random(7))
    work = work_for(master, ops, random.Random(11))
    shutil.copyfile(master, ours)
    shutil.copyfile(master, theirs)
    work_file = folder / "work.json"
    work_file.write_text(json.dumps(work))
    node = subprocess.Popen(
        ["node", str(SERVE_SCRIPT), str(theirs), "brain", str(work_file)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env.probe_env(),
    )  # fmt: skip
    assert node.stdin is not None and node.stdout is not None
    out: dict[str, Any] = {"traces": size}
    try:
        if node.stdout.readline().strip() != "ready":
            raise RuntimeError("the AgentOS process did not start")
        with agentos_service(ours) as service:
            for op, tool, listed, arguments in OPS:
                samples: dict[str, list[float]] = {"memgui_tool": [], "agentos_tool": []}
                for index, item in enumerate(work[listed]):
                    turns = [
                        ("memgui_tool", lambda: memgui_once(service, tool, arguments(item))),  # noqa: B023
                        ("agentos_tool", lambda: agentos_once(node, op, index)),  # noqa: B023
                    ]
                    for side, once in turns if index % 2 == 0 else turns[::-1]:
                        took = once()  # each turn runs here, before the loop moves on
                        if index >= WARMUP:
                            samples[side].append(took)
                ours_p, theirs_p = (
                    percentiles(samples[s]) for s in ("memgui_tool", "agentos_tool")
                )
                ratio = round(theirs_p["p50_ms"] / ours_p["p50_ms"], 2)
                out[tool] = {"memgui_tool": ours_p, "agentos_tool": theirs_p,
                             "ratio_p50": ratio, "memgui_faster": ratio > 1}  # fmt: skip
    finally:
        node.stdin.close()
        node.wait(timeout=60)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--ops", type=int, default=400)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memgui-agentos-writes-"))
    try:
        results = {str(s): size_run(s, args.ops, folder) for s in args.sizes}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    emit("agentos_writes", {"ops": args.ops, "sizes": results})


if __name__ == "__main__":
    main()
