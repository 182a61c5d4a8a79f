"""No write that stalls: the slowest single add, update, forget and search of a big brain.

    .venv/bin/python -m tests.bench.bench_stalls [--brain PATH | --traces 1000000]
        [--ops 10000] [--block 500] [--thresholds 256 32] [--merge upkeep] [--keep]

The brain at PATH (e.g. a 1M-trace brain kept from bench_keyword) is copied to a temporary
folder first, never written; without one, a brain of `--traces` is built there as
bench_core builds its big one (1M: most of an hour). On the copy, `--ops` operations per
full-text flush threshold (`fulltext.FLUSH_AFTER`: how many marked rows a write lets gather
before it indexes them in its own transaction) run in blocks of `--block`, the thresholds
taking turns on the same brain and page cache (the rows pending are indexed, untimed,
between blocks), so the machine's load falls on both alike. The writes, seeded: 45 %
updates of a random trace's text, 35 % adds, 20 % forgets of a random live trace; after
each block, 20 searches (bench_search_floor's two-word queries, keyword, limit 20, no
recall written), the first of which indexes what the block left pending. Each operation's
wall time and the thread's CPU time (what a loaded machine's scheduler adds is wall minus
CPU) give p50, p99 and max per operation and threshold. The target: max ≤ 20 ms at 1M for
every operation.

The search's floor in the same run: the exact-bm25 statement alone (FTS5's best 20 by
`ORDER BY bm25(…)`, no row read) on the same queries, timed right after each search.

`--merge` says who merges memgui_fts's segments (the copy is migrated first, untimed):
`upkeep` (schema 6: automerge off, the upkeep thread `core.maintenance.Maintainer` runs
on the copy with its own connection meanwhile, as the servers and the app run it, and
first merges what the copy had due, untimed, as it would at rest),
`inline` (schema 3's FTS5 automerge 4, inside the writes) or `none` (automerge off, no
upkeep: only FTS5's crisis merges). The segments left at the end are reported.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.maintenance import Maintainer
from memgui.core.search import fts_merge, fulltext
from memgui.core.storage import schema
from tests.bench.bench_core import fill, sentence
from tests.bench.bench_keyword import FLOOR_SQL
from tests.bench.bench_search_floor import fts_query, queries
from tests.bench.common import emit

TARGET_MAX_MS = 20.0
MIX = (("update", 45), ("add", 35), ("forget", 20))
SEARCHES_PER_BLOCK = 20


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    if not ordered:
        return {"n": 0}

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"p50_ms": pick(0.5), "p99_ms": pick(0.99), "max_ms": pick(1.0), "n": len(ordered)}


def timed(call: Callable[[], Any]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.thread_time()
    call()
    return time.perf_counter() - wall, time.thread_time() - cpu


class Workload:
    """The seeded mix on one open brain; picks live traces by random rowid."""

    def __init__(self, brain: Brain, seed: int) -> None:
        self.brain = brain
        self.rng = random.Random(seed)
        self.asked = [(" ".join(w), fts_query(w)) for w in queries()]
        self.top = int(brain.db.conn.execute("SELECT max(rowid) FROM memory_traces").get)
        self.ops = [name for name, weight in MIX for _ in range(weight)]

    def live_id(self) -> str:
        conn = self.brain.db.conn
        while True:
            row = conn.execute(
                "SELECT id FROM memory_traces WHERE rowid = ? AND deleted = 0",
                (self.rng.randint(1, self.top),),
            ).fetchone()
            if row is not None:
                return str(row[0])

    def step(self, out: dict[str, dict[str, list[float]]], op: str | None = None) -> None:
        op = op or self.rng.choice(self.ops)
        brain = self.brain
        if op == "search":
            text, fts = self.rng.choice(self.asked)
            call: Callable[[], Any] = lambda: brain.search(  # noqa: E731
                text, limit=20, mode="keyword", record_recall=False
            )
            conn = brain.db.conn
            floor = timed(lambda: list(conn.execute(FLOOR_SQL, (fts, 20))))
            out.setdefault("search_floor", {"wall": [], "cpu": []})
            out["search_floor"]["wall"].append(floor[0])
            out["search_floor"]["cpu"].append(floor[1])
        elif op == "add":
            content = sentence(self.rng)
            call = lambda: brain.add(content, tags=["bench"])  # noqa: E731
        elif op == "update":
            trace_id, content = self.live_id(), sentence(self.rng)
            call = lambda: brain.update(trace_id, {"content": content})  # noqa: E731
        else:
            trace_id = self.live_id()
            call = lambda: brain.forget(trace_id)  # noqa: E731
        wall, cpu = timed(call)
        out.setdefault(op, {"wall": [], "cpu": []})
        out[op]["wall"].append(wall)
        out[op]["cpu"].append(cpu)


MERGES = ("upkeep", "inline", "none")
SETTLE_S = 600.0  # at most, for the upkeep to merge what the copy had due before the writes


def prepared(path: Path, merge: str) -> tuple[Brain, Maintainer | None]:
    """The copy open, migrated (untimed) and set to merge as `merge` says."""
    brain = Brain.open(path, create=False, actor="bench")
    brain.forget(brain.add("the first write migrates an older brain").id)
    automerge = 4 if merge == "inline" else schema.MEMGUI_FTS_AUTOMERGE
    with brain.db.write("bench", "merge settings"):
        brain.db.conn.execute(
            "INSERT INTO memgui_fts(memgui_fts, rank) VALUES ('automerge', ?)", (automerge,)
        )
    upkeep = None
    if merge == "upkeep":
        upkeep = Maintainer(path, None, interval=3600, name="bench-upkeep").start()
        # What the build left to merge, first (a pass stops after its time budget: several
        # may be needed), so the writes meet the brain as the upkeep leaves it at rest.
        deadline = time.monotonic() + SETTLE_S
        passes = 1
        while upkeep.wait_for_merge_passes(passes, max(0.0, deadline - time.monotonic())):
            if not fts_merge.merge_due(brain.db):
                break
            passes = upkeep.merge_passes + 1
    return brain, upkeep


def run(path: Path, ops: int, block: int, thresholds: list[int], merge: str) -> dict[str, Any]:
    brain, upkeep = prepared(path, merge)
    kept = fulltext.FLUSH_AFTER
    merges: dict[str, Any] = {"merge": merge, "levels_at_start": fts_merge.levels(brain.db.conn)}
    try:
        traces = int(brain.db.conn.execute("SELECT count(*) FROM memory_traces").get)
        work = Workload(brain, seed=20)
        samples: dict[int, dict[str, dict[str, list[float]]]] = {t: {} for t in thresholds}
        done = dict.fromkeys(thresholds, 0)
        while min(done.values()) < ops:
            for threshold in thresholds:
                fulltext.flush(brain.db)  # untimed: each block starts with nothing pending
                fulltext.FLUSH_AFTER = threshold
                for _ in range(min(block, ops - done[threshold])):
                    work.step(samples[threshold])
                for _ in range(SEARCHES_PER_BLOCK):  # the first one indexes what waits
                    work.step(samples[threshold], "search")
                done[threshold] += min(block, ops - done[threshold])
        fulltext.flush(brain.db)
        merges["levels_at_end"] = fts_merge.levels(brain.db.conn)
        merges["segments_at_end"] = fts_merge.segment_count(brain.db.conn)
    finally:
        fulltext.FLUSH_AFTER = kept
        if upkeep is not None:
            upkeep.stop()
            merges["upkeep_merge_steps"] = upkeep.merge_steps
        brain.close()
    results: dict[str, Any] = {}
    for threshold, per_op in samples.items():
        ops_out = {
            op: {"wall": stats(times["wall"]), "cpu": stats(times["cpu"])}
            for op, times in sorted(per_op.items())
        }
        worst = max(v["wall"]["max_ms"] for k, v in ops_out.items() if k != "search_floor")
        results[f"flush_after_{threshold}"] = {
            "ops": ops_out,
            "max_wall_ms": worst,
            "within_target": worst <= TARGET_MAX_MS,
        }
    return {
        "traces": traces,
        "ops_per_threshold": ops,
        "block": block,
        **merges,
        "results": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brain", type=Path)
    parser.add_argument("--traces", type=int, default=1_000_000)
    parser.add_argument("--ops", type=int, default=10_000)
    parser.add_argument("--block", type=int, default=500)
    parser.add_argument("--thresholds", type=int, nargs="+", default=[256, fulltext.FLUSH_AFTER])
    parser.add_argument("--merge", choices=MERGES, default="upkeep")
    parser.add_argument("--keep", action="store_true", help="keep the written copy")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memgui-stalls-"))
    try:
        copy = folder / "brain.sqlite"
        if args.brain is not None:
            shutil.copyfile(args.brain, copy)
        else:
            with Brain.open(copy, actor="bench") as brain:
                fill(brain, args.traces, random.Random(5))
        result = run(copy, args.ops, args.block, args.thresholds, args.merge)
        brain_name = str(args.brain or f"built, {args.traces} traces")
        emit("stalls", {"brain": brain_name, "target_max_ms": TARGET_MAX_MS, **result})
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
