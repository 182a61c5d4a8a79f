"""Import benchmarks (issue 3): plan + commit of big sources into a fresh brain.

    .venv/bin/python -m tests.bench.bench_import [--traces 20000] [--jsonl 100000]

Prints one JSON document: for each source, the seconds spent planning and committing
(targets: 20k-trace AgentOS JSON export <= 3 s, 100k-record JSONL <= 5 s, the obsidian-help
vault <= 5 s). The sources are generated in a temporary folder from real sentences.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from memgui.core.brain import Brain
from memgui.core.io.commit import commit
from memgui.core.io.plan import ImportOptions, plan
from memgui.core.progress import run_to_end
from tests.bench.bench_core import SENTENCES, WORDS
from tests.bench.common import emit

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
BASE_MS = 1_767_225_600_000


def agentos_export(path: Path, count: int, rng: random.Random) -> Path:
    """An export as AgentOS writes it: JSON columns as strings, scope ids in the metadata."""
    traces = []
    for i in range(count):
        scope_id = f"user-{rng.randrange(50)}"
        traces.append(
            {
                "brain_id": "brain",
                "id": f"mt_{uuid.UUID(int=rng.getrandbits(128))}",
                "type": rng.choice(("episodic", "semantic", "procedural")),
                "scope": "user",
                "content": f"{rng.choice(SENTENCES)} ({i})",
                "embedding": None,
                "strength": 1,
                "created_at": BASE_MS + i,
                "last_accessed": None,
                "retrieval_count": 0,
                "tags": orjson.dumps([rng.choice(WORDS)]).decode(),
                "emotions": "{}",
                "metadata": orjson.dumps({"scopeId": scope_id}).decode(),
                "deleted": 0,
            }
        )
    payload = {"meta": {"schema_version": "2"}, "traces": traces, "nodes": [], "edges": []}
    path.write_bytes(orjson.dumps(payload))
    return path


def jsonl_export(path: Path, count: int, rng: random.Random) -> Path:
    header = {
        "record": "header",
        "format": "agent-memory-export",
        "version": 1,
        "exported_at": BASE_MS // 1000,
        "embedding_model": "nomic-embed-text",
        "embedding_dim": 768,
        "schema_version": 3,
        "agent_memory_version": "0.1.0",
        "exported_rows": count,
        "exported_links": 0,
    }
    kinds = ("DECISION", "PATTERN", "ERROR", "TODO", "ARCHITECTURE", "CONSTRAINT")
    with path.open("wb") as out:
        out.write(orjson.dumps(header) + b"\n")
        for key in range(count):
            memory = {
                "record": "memory",
                "key": key,
                "type": rng.choice(kinds),
                "content": f"{rng.choice(SENTENCES)} ({key})",
                "tags": [rng.choice(WORDS)],
                "source": "cli",
                "scope": "bench",
                "created_at": BASE_MS // 1000 + key,
                "last_accessed": BASE_MS // 1000 + key,
                "access_count": 0,
                "expires_at": None,
            }
            out.write(orjson.dumps(memory) + b"\n")
    return path


def timed_import(folder: Path, name: str, source: Path, fmt: str) -> dict[str, Any]:
    brain = Brain.open(folder / f"{name}.sqlite", actor="bench")
    try:
        start = time.perf_counter()
        the_plan = run_to_end(plan(brain, source, options=ImportOptions(format=fmt)))
        planned = time.perf_counter()
        result = run_to_end(commit(brain, the_plan))
        done = time.perf_counter()
        again = time.perf_counter()
        second = run_to_end(plan(brain, source, options=ImportOptions(format=fmt)))
        replanned = time.perf_counter() - again
    finally:
        brain.close()
    return {
        "records": len(the_plan.records),
        "imported": result.imported,
        "plan_s": round(planned - start, 3),
        "commit_s": round(done - planned, 3),
        "total_s": round(done - start, 3),
        "second_plan_s": round(replanned, 3),
        "second_plan_new": second.counts["new"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--jsonl", type=int, default=100_000)
    args = parser.parse_args()
    rng = random.Random(3)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export = agentos_export(folder / "export.json", args.traces, rng)
        jsonl = jsonl_export(folder / "memories.jsonl", args.jsonl, rng)
        results = {
            f"agentos_json_{args.traces}": timed_import(folder, "json", export, "json"),
            f"jsonl_{args.jsonl}": timed_import(folder, "jsonl", jsonl, "jsonl"),
            "obsidian_help_vault": timed_import(
                folder, "vault", SHARED / "corpora" / "obsidian-help", "obsidian"
            ),
        }
    emit("import", results)


if __name__ == "__main__":
    main()
