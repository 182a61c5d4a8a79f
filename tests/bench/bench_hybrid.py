"""End-to-end hybrid search (keyword leg + semantic leg + RRF + strength) at 100k × 768.

Run: .venv/bin/python -m tests.bench.bench_hybrid [--size 100000]
The query embedding comes from the test Ollama server over real HTTP, as in the app; the
brain's vectors are random unit vectors, its text real sentences (so both legs do work).
Prints one JSON document. Not part of the test run.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import numpy as np

from memgui.core.brain import Brain
from memgui.core.search import fulltext, vectors
from memgui.core.search.embed import OllamaEmbedder
from tests.bench.bench_core import SENTENCES
from tests.bench.common import emit, percentiles, timed
from tests.support.ollama_server import FakeOllama

DIMS = 768


def fill(brain: Brain, count: int) -> None:
    rng = np.random.default_rng(5)
    pick = random.Random(5)
    conn = brain.db.conn
    brain.add("seed")
    with brain.write("bench"):
        vectors.pin_model(conn, brain.brain_id, "bench", DIMS)
        vectors.ensure_index(conn, DIMS)
        for start in range(0, count, 10_000):
            block = rng.normal(size=(min(10_000, count - start), DIMS)).astype("<f4")
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            conn.executemany(
                "INSERT INTO memory_traces (brain_id, id, type, scope, content, embedding, "
                "created_at, embedding_status, version) VALUES (?, ?, 'semantic', ?, ?, ?, 0, "
                "1, 1)",
                (
                    (
                        brain.brain_id,
                        f"mt_bench_{start + i}",
                        pick.choice(("user", "thread")),
                        pick.choice(SENTENCES),
                        vector.tobytes(),
                    )
                    for i, vector in enumerate(block)
                ),
            )
        conn.execute(
            f"INSERT INTO {vectors.VEC_TABLE}(rowid, embedding) "
            "SELECT rowid, embedding FROM memory_traces WHERE embedding IS NOT NULL"
        )
        vectors.log_changes(conn, brain.brain_id, [None])
        fulltext.index_all(brain.db)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    server = FakeOllama(models={"bench": DIMS}).start()
    rng = random.Random(9)
    queries = [" ".join(rng.choice(SENTENCES).split()[:4]) for _ in range(args.queries)]
    results: dict[str, object] = {"size": args.size, "dimensions": DIMS}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            brain = Brain.open(Path(tmp) / "hybrid.sqlite")
            fill(brain, args.size)
            brain.use_embedder(OllamaEmbedder(server.url, model="bench"))
            assert brain.search(queries[0], mode="hybrid").search_mode == "hybrid"
            for limit in (10, 50):
                samples = [
                    timed(
                        lambda q=q, n=limit: brain.search(
                            q, limit=n, mode="hybrid", record_recall=False
                        )
                    )
                    for q in queries
                ]
                results[f"hybrid_limit_{limit}"] = percentiles(samples)
            from memgui.core.model import TraceFilter

            samples = [
                timed(
                    lambda q=q: brain.search(
                        q, TraceFilter(scope="user"), limit=10, mode="hybrid", record_recall=False
                    )
                )
                for q in queries
            ]
            results["hybrid_limit_10_scope_filter"] = percentiles(samples)
            brain.close()
    finally:
        server.stop()
    emit("hybrid", results)


if __name__ == "__main__":
    main()
