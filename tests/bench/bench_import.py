"""Import benchmarks (issue 3): plan + commit of big sources into a fresh brain.

    .venv/bin/python -m tests.bench.bench_import [--traces 20000] [--jsonl 100000]
        [--chatgpt-mb 200] [--only json jsonl vault chatgpt]

Prints one JSON document: for each source, the wall and CPU seconds spent planning and
committing, and the load average when it started (other work shares the machine: compare
CPU seconds between runs). Targets: 20k-trace AgentOS JSON export <= 3 s, 100k-record JSONL
<= 5 s, the obsidian-help vault <= 5 s. The ChatGPT entry is the peak memory (RSS) of a
process that plans and commits a generated `conversations.json` of about `--chatgpt-mb` MB
(target: <= 4x the file). The sources are generated in a temporary folder from real
sentences.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from tests.bench.bench_core import SENTENCES, WORDS
from tests.bench.common import emit
from tests.support.chatgpt_conversations import linear_conversation

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


def chatgpt_export(path: Path, megabytes: int, rng: random.Random) -> Path:
    """A `conversations.json` of linear conversations, 20 messages each, written streaming."""
    target = megabytes * 1_000_000
    written = 0
    with path.open("wb") as out:
        out.write(b"[")
        number = 0
        while written < target:
            texts = [
                " ".join(rng.choice(SENTENCES) for _ in range(4)) + f" ({number})"
                for _ in range(20)
            ]
            conversation_id = str(uuid.UUID(int=rng.getrandbits(128)))
            conversation = linear_conversation(number, texts, conversation_id)
            chunk = (b"," if number else b"") + orjson.dumps(conversation)
            out.write(chunk)
            written += len(chunk)
            number += 1
        out.write(b"]")
    return path


def cpu() -> float:
    return time.process_time()


def timed_import(folder: Path, name: str, source: Path, fmt: str) -> dict[str, Any]:
    load = os.getloadavg()[0]
    brain = Brain.open(folder / f"{name}.sqlite", actor="bench")
    try:
        start, start_cpu = time.perf_counter(), cpu()
        the_plan = run_to_end(plan(brain, source, options=ImportOptions(format=fmt)))
        planned, planned_cpu = time.perf_counter(), cpu()
        result = run_to_end(commit(brain, the_plan))
        done, done_cpu = time.perf_counter(), cpu()
        second = run_to_end(plan(brain, source, options=ImportOptions(format=fmt)))
        replanned = time.perf_counter() - done
    finally:
        brain.close()
    return {
        "records": len(the_plan.records),
        "imported": result.imported,
        "load_average_1m": round(load, 2),
        "plan_s": round(planned - start, 3),
        "plan_cpu_s": round(planned_cpu - start_cpu, 3),
        "commit_s": round(done - planned, 3),
        "commit_cpu_s": round(done_cpu - planned_cpu, 3),
        "total_s": round(done - start, 3),
        "total_cpu_s": round(done_cpu - start_cpu, 3),
        "second_plan_s": round(replanned, 3),
        "second_plan_new": second.counts["new"],
    }


def peak_memory(folder: Path, source: Path) -> dict[str, Any]:
    """Plan and commit `source` in a child process; its peak RSS against the file's size."""
    load = os.getloadavg()[0]
    child = subprocess.run(
        [sys.executable, "-m", "tests.bench.bench_import", "--memory-child", str(source)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    measured = orjson.loads(child.stdout)
    size = source.stat().st_size
    return {
        "file_mb": round(size / 1e6, 1),
        "load_average_1m": round(load, 2),
        **measured,
        "peak_rss_over_file": round(measured["peak_rss_mb"] * 1e6 / size, 2),
    }


def memory_child(source: Path) -> None:
    folder = source.parent
    brain = Brain.open(folder / "chatgpt.sqlite", actor="bench")
    try:
        start, start_cpu = time.perf_counter(), cpu()
        the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="chatgpt")))
        planned, planned_cpu = time.perf_counter(), cpu()
        result = run_to_end(commit(brain, the_plan))
        done, done_cpu = time.perf_counter(), cpu()
    finally:
        brain.close()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    report = {
        "records": len(the_plan.records),
        "imported": result.imported,
        "plan_s": round(planned - start, 3),
        "plan_cpu_s": round(planned_cpu - start_cpu, 3),
        "commit_s": round(done - planned, 3),
        "commit_cpu_s": round(done_cpu - planned_cpu, 3),
        "peak_rss_mb": round(peak_kib * 1024 / 1e6, 1),
    }
    print(orjson.dumps(report).decode())


SOURCES = ("json", "jsonl", "vault", "chatgpt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--jsonl", type=int, default=100_000)
    parser.add_argument("--chatgpt-mb", type=int, default=200)
    parser.add_argument("--only", nargs="+", choices=SOURCES, default=list(SOURCES))
    parser.add_argument("--memory-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child is not None:
        memory_child(args.memory_child)
        return
    rng = random.Random(3)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "json" in args.only:
            export = agentos_export(folder / "export.json", args.traces, rng)
            results[f"agentos_json_{args.traces}"] = timed_import(folder, "json", export, "json")
        if "jsonl" in args.only:
            jsonl = jsonl_export(folder / "memories.jsonl", args.jsonl, rng)
            results[f"jsonl_{args.jsonl}"] = timed_import(folder, "jsonl", jsonl, "jsonl")
        if "vault" in args.only:
            vault = SHARED / "corpora" / "obsidian-help"
            results["obsidian_help_vault"] = timed_import(folder, "vault", vault, "obsidian")
        if "chatgpt" in args.only:
            export = chatgpt_export(folder / "conversations.json", args.chatgpt_mb, rng)
            results[f"chatgpt_{args.chatgpt_mb}mb_memory"] = peak_memory(folder, export)
    emit("import", results)


if __name__ == "__main__":
    main()
