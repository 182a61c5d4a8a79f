"""Semantic search cost at 100k and 300k × 768: sqlite-vec vec0 scan vs the cached matrix.

Run: .venv/bin/python -m tests.bench.bench_vectors [--sizes 100000 300000] > result.json
Prints one JSON object (machine info, and per size: p50/p95 in ms). Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from memgui.core.brain import Brain
from memgui.core.search import hybrid, vector_cache, vectors

DIMS = 768
QUERIES = 30


def fill(brain: Brain, count: int, rng: np.random.Generator) -> None:
    """Insert `count` embedded traces straight into the tables (the write path is not timed)."""
    conn = brain.db.conn
    brain.add("seed")  # creates brain_meta rows through the facade
    with brain.write("bench"):
        vectors.pin_model(conn, brain.brain_id, "bench", DIMS)
        vectors.ensure_index(conn, DIMS)
        for start in range(0, count, 10_000):
            block = rng.normal(size=(min(10_000, count - start), DIMS)).astype("<f4")
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            for offset, vector in enumerate(block):
                blob = vector.tobytes()
                conn.execute(
                    "INSERT INTO memory_traces (brain_id, id, type, scope, content, embedding, "
                    "created_at, embedding_status, version) VALUES (?, ?, 'semantic', 'user', "
                    "?, ?, 0, 1, 1)",
                    (brain.brain_id, f"mt_bench_{start + offset}", "text", blob),
                )
                conn.execute(
                    f"INSERT INTO {vectors.VEC_TABLE}(rowid, embedding) VALUES (?, ?)",
                    (conn.last_insert_rowid(), blob),
                )
        vectors.log_changes(conn, brain.brain_id, [None])


def timed(fn, runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    return {
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 2),
    }


def bench_size(count: int, folder: Path) -> dict[str, object]:
    rng = np.random.default_rng(count)
    brain = Brain.open(folder / f"bench-{count}.sqlite")
    began = time.perf_counter()
    fill(brain, count, rng)
    fill_s = time.perf_counter() - began
    conn, bid = brain.db.conn, brain.brain_id
    queries = iter(rng.normal(size=(10 * QUERIES, DIMS)).astype(np.float32))
    began = time.perf_counter()
    vector_cache.rank(conn, bid, next(queries), 50)  # first use loads the matrix
    load_s = time.perf_counter() - began
    keyword = [f"mt_bench_{i}" for i in range(200)]
    result: dict[str, object] = {
        "traces": count,
        "dimensions": DIMS,
        "fill_s": round(fill_s, 1),
        "matrix_load_s": round(load_s, 2),
        "matrix_mib": round(count * DIMS * 4 / 2**20),
        "matrix_knn_200_unfiltered": timed(
            lambda: vector_cache.rank(conn, bid, next(queries), 200), QUERIES
        ),
        "matrix_knn_200_filtered": timed(
            lambda: vector_cache.rank(
                conn, bid, next(queries), 200, "t.deleted = 0 AND t.type = ?", ["semantic"]
            ),
            QUERIES,
        ),
        "hybrid_fuse_limit_50": timed(
            lambda: hybrid.rrf_fuse(
                keyword, [t for t, _ in vector_cache.rank(conn, bid, next(queries), 200)]
            ),
            QUERIES,
        ),
        "vec0_knn_200": timed(lambda: vectors.knn_vec0(conn, bid, next(queries), 200), 10),
    }
    brain.close()
    vector_cache.forget_cache()
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000])
    args = parser.parse_args()
    report: dict[str, object] = {
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "numpy": np.__version__,
        },
        "results": [],
    }
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            report["results"].append(bench_size(size, Path(folder)))  # type: ignore[union-attr]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
