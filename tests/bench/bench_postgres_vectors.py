"""Search by meaning on a shared brain: memgui's numpy matrix against pgvector, same vectors.

    .venv/bin/python -m tests.bench.bench_postgres_vectors [--traces 100000] [--dims 768]
        [--queries 100] [--hnsw]

A PostgreSQL brain of `--traces` traces (bench_core's sentences) with `--dims`-dimension
vectors (the test server's bag-of-concepts vectors, float32 BYTEA as AgentOS stores them) is
written by COPY. Then, query by query, taking turns:
- `matrix_search`: `SharedBrain.search(mode="semantic", limit=20, no recall)` through the
  real ollama client and the tests' Ollama-compatible server: the embed call, the check that
  no embedded row changed (one aggregate), the product, the rows read;
- `matrix_rank`: the ranking alone (`shared_vectors.rank`: the check and the product);
- `pgvector_exact`: the same vectors in a `vector(dims)` column, `ORDER BY v <=> q LIMIT 20`
  (no index: exact, as the matrix is);
- with `--hnsw`, `pgvector_hnsw`: after `CREATE INDEX … USING hnsw (v vector_cosine_ops)`
  (approximate), and the index's build time.
Also: the first search's load of the matrix, and a search after one trace was edited (only
that row's vector is read again). Ratios are pgvector's p50 over the matrix's.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from memgui.core import shared_vectors
from memgui.core.search.embed import OllamaEmbedder, pack_vector
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres_vectors
from memgui.core.storage.engine import parse_postgres_address
from tests.bench.bench_core import sentence
from tests.bench.bench_search_floor import queries
from tests.bench.common import emit, percentiles
from tests.support.ollama_server import FakeOllama, concept_vector
from tests.support.postgres import _serve

MODEL = "nomic-embed-text"
LIMIT = 20


def fill(conn: Any, brain_id: str, count: int, dims: int) -> None:
    rng = random.Random(11)
    with conn.transaction():
        with conn.cursor().copy(
            "COPY memory_traces (brain_id, id, type, scope, content, embedding, created_at, "
            "embedding_status) FROM STDIN"
        ) as copy:
            for i in range(count):
                text = sentence(rng)
                vector = pack_vector(concept_vector(text, dims))
                copy.write_row((brain_id, f"v{i:08d}", "semantic", "user", text, vector, i, 1))
        postgres_vectors.pin_model(conn, brain_id, MODEL, dims)
    conn.execute("ANALYZE memory_traces")


def pgvector_table(conn: Any, brain_id: str, dims: int) -> None:
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    conn.execute(f"CREATE TABLE bench_vec (id TEXT PRIMARY KEY, v vector({dims}))")
    with conn.transaction():
        rows = conn.execute(
            "SELECT id, embedding FROM memory_traces WHERE brain_id = %s", (brain_id,)
        )
        with conn.cursor().copy("COPY bench_vec (id, v) FROM STDIN") as copy:
            import numpy as np

            for trace_id, blob in rows:
                values = np.frombuffer(bytes(blob), dtype="<f4")
                copy.write_row((trace_id, "[" + ",".join(f"{v:.7g}" for v in values) + "]"))
    conn.execute("ANALYZE bench_vec")


def pgvector_query(conn: Any, vector: list[float]) -> list[str]:
    literal = "[" + ",".join(f"{v:.7g}" for v in vector) + "]"
    rows = conn.execute(
        "SELECT id FROM bench_vec ORDER BY v <=> %s::vector LIMIT %s", (literal, LIMIT)
    ).fetchall()
    return [r[0] for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--hnsw", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pgvec-"))
    server = _serve(root)
    pg = next(server)
    ollama = FakeOllama(models={MODEL: args.dims}).start()
    out: dict[str, Any] = {"traces": args.traces, "dims": args.dims}
    try:
        address = pg.address(pg.create_database(), "bench")
        asked = [" ".join(words) for words in queries(args.queries)]
        with SharedBrain.open(address) as brain:
            start = time.perf_counter()
            fill(brain.conn, "bench", args.traces, args.dims)
            out["fill_by_copy_s"] = round(time.perf_counter() - start, 1)
            brain.use_embedder(OllamaEmbedder(ollama.url, model=MODEL))
            start = time.perf_counter()
            brain.search(asked[0], mode="semantic", limit=LIMIT, record_recall=False)
            out["first_search_loads_matrix_s"] = round(time.perf_counter() - start, 2)
            start = time.perf_counter()
            pgvector_table(brain.conn, "bench", args.dims)
            out["pgvector_table_fill_s"] = round(time.perf_counter() - start, 1)
            key = (parse_postgres_address(address).conninfo, "bench")
            vectors = [concept_vector(q, args.dims) for q in asked]
            times: dict[str, list[float]] = {"matrix_search": [], "matrix_rank": []}
            times["pgvector_exact"] = []
            agree = 0
            for turn, (query, vector) in enumerate(zip(asked, vectors, strict=True)):
                found: dict[str, list[str]] = {}

                def search(q: str = query) -> list[str]:
                    hits = brain.search(q, mode="semantic", limit=LIMIT, record_recall=False)
                    return [h.trace.id for h in hits.hits]

                def rank(v: list[float] = vector) -> list[str]:
                    return [t for t, _ in shared_vectors.rank(brain.conn, key, v, LIMIT, None)]

                def exact(v: list[float] = vector) -> list[str]:
                    return pgvector_query(brain.conn, v)

                calls = [("matrix_search", search), ("matrix_rank", rank)]
                calls.append(("pgvector_exact", exact))
                for name, call in calls if turn % 2 == 0 else calls[::-1]:
                    start = time.perf_counter()
                    found[name] = call()
                    times[name].append(time.perf_counter() - start)
                agree += found["matrix_rank"][:1] == found["pgvector_exact"][:1]
            out["first_hit_agrees"] = f"{agree} of {len(asked)}"
            if args.hnsw:
                start = time.perf_counter()
                brain.conn.execute("CREATE INDEX ON bench_vec USING hnsw (v vector_cosine_ops)")
                out["hnsw_build_s"] = round(time.perf_counter() - start, 1)
                times["pgvector_hnsw"] = []
                for vector in vectors:
                    start = time.perf_counter()
                    pgvector_query(brain.conn, vector)
                    times["pgvector_hnsw"].append(time.perf_counter() - start)
            brain.update("v00000001", {"content": "coffee with a kitten"})
            run = list(brain.backfill())  # one row embedded again
            start = time.perf_counter()
            brain.search(asked[1], mode="semantic", limit=LIMIT, record_recall=False)
            out["search_after_one_edit_ms"] = round((time.perf_counter() - start) * 1000, 1)
            out["backfill_steps"] = len(run)
        for name, samples in times.items():
            out[name] = percentiles(samples)
        out["pgvector_exact_over_matrix_rank_p50"] = round(
            out["pgvector_exact"]["p50_ms"] / out["matrix_rank"]["p50_ms"], 2
        )
    finally:
        ollama.stop()
        server.close()
    emit("postgres_vectors", out)


if __name__ == "__main__":
    main()
