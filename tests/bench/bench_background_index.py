"""The app's writes with the full-text flush on the upkeep thread, against the flush inline.

    .venv/bin/python -m tests.bench.bench_background_index [--traces 20000] [--writes 2000]

A brain of `--traces` traces; then `--writes` single updates of a random trace's text on one
connection (the GUI thread's, as the app's QUndoCommands write), timed one by one (wall and
the thread's CPU), twice: as before (`inline`: every 32nd write indexes the marked rows in
its own transaction) and as the app runs now (`later`: the connection indexes later, the
upkeep `Maintainer(index_pending=True)` indexes on its own connection meanwhile, in small
batches). Reports each mode's p50 / p95 / max, how many flushes ran on the writing thread,
the upkeep's batches (count, rows, longest transaction), and how long after the last write
the last row was indexed. The floor is the inline mode of the same run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.maintenance import Maintainer
from memgui.core.search import fulltext
from tests.bench.common import emit, percentiles

WORDS = "river stone maple quiet harbour lantern copper meadow signal orbit".split()


def fill(path: Path, traces: int) -> list[str]:
    rng = random.Random(7)
    with Brain.open(path, actor="bench") as brain, brain.batch():
        return [brain.add(" ".join(rng.choices(WORDS, k=12)) + f" n{i}").id for i in range(traces)]


def writes(
    brain: Brain, ids: list[str], count: int, mode: str
) -> tuple[list[float], list[float], int]:
    """`count` updates; each one's wall and CPU time, and the flushes run on this thread."""
    rng = random.Random(11)  # the same traces in both modes, each given a new text
    me = threading.current_thread().name
    flushed = 0
    index_rows = fulltext._index_rows

    def counted(db: Any, rows: list[Any], agentos: bool) -> None:
        nonlocal flushed
        if threading.current_thread().name == me:
            flushed += 1
        index_rows(db, rows, agentos)

    fulltext._index_rows = counted  # type: ignore[assignment]
    wall, cpu = [], []
    try:
        for n in range(count):
            text = " ".join(rng.choices(WORDS, k=12)) + f" {mode}{n}"
            started, started_cpu = time.perf_counter(), time.thread_time()
            brain.update(rng.choice(ids), {"content": text})
            wall.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - started_cpu)
    finally:
        fulltext._index_rows = index_rows  # type: ignore[assignment]
    return wall, cpu, flushed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=2_000)
    args = parser.parse_args()
    results: dict[str, Any] = {"traces": args.traces, "writes": args.writes}
    with tempfile.TemporaryDirectory(prefix="memgui-bench-") as folder:
        path = Path(folder) / "brain.sqlite"
        ids = fill(path, args.traces)
        with Brain.open(path, actor="gui") as brain:
            wall, cpu, flushed = writes(brain, ids, args.writes, "inline")
        results["inline"] = {
            "wall": percentiles(wall),
            "cpu": percentiles(cpu),
            "flushes_on_writer": flushed,
        }
        upkeep = Maintainer(path, None, interval=3600, index_pending=True).start()
        try:
            with Brain.open(path, actor="gui") as brain:
                brain.index_later()
                wall, cpu, flushed = writes(brain, ids, args.writes, "later")
                marked = fulltext.pending_count(brain.db)
                last_write = time.perf_counter()
                passes = upkeep.index_passes
                while fulltext.pending_count(brain.db):
                    passes += 1
                    upkeep.wait_for_index_passes(passes, 60)
                caught_up = time.perf_counter() - last_write
                indexer = upkeep._indexer
        finally:
            upkeep.stop()
        results["later"] = {
            "wall": percentiles(wall),
            "cpu": percentiles(cpu),
            "flushes_on_writer": flushed,
            "upkeep_batches": indexer.batches if indexer else 0,
            "upkeep_rows": indexer.indexed if indexer else 0,
            "upkeep_rows_all_passes": upkeep.indexed_rows,
            "marked_rows": marked,
            "upkeep_longest_batch_ms": round(indexer.longest_s * 1000, 2) if indexer else 0,
            "upkeep_most_batch_cpu_ms": round(indexer.most_cpu_s * 1000, 2) if indexer else 0,
            "indexed_all_after_last_write_s": round(caught_up, 3),
        }
    results["max_wall_ratio_later_to_inline"] = round(
        results["later"]["wall"]["max_ms"] / results["inline"]["wall"]["max_ms"], 3
    )
    emit("background_index", results)


if __name__ == "__main__":
    main()
