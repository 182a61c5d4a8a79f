"""Core benchmarks (issue 2): single adds, updates and keyword search at 20k and 1M traces.

    .venv/bin/python -m tests.bench.bench_core [--adds N] [--big N]   (--big 0: no 1M part)

Prints one JSON document. The 1M brain is built once in a temporary folder with
`brain.batch()` (bulk, one transaction per 20k rows) and reused within the run.
"""

from __future__ import annotations

import argparse
import random
import re
import tempfile
import time
from pathlib import Path

from memgui.core.brain import Brain
from tests.bench.common import emit, percentiles, timed

SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def _real_sentences() -> list[str]:
    """Natural text (Zipf-distributed words): sentences of the English Obsidian help."""
    out: list[str] = []
    for note in sorted((SHARED / "corpora" / "obsidian-help" / "en").rglob("*.md")):
        text = note.read_text(encoding="utf-8")
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if len(s) > 40)
    return out


SENTENCES = _real_sentences()
WORDS = sorted({w.lower() for s in SENTENCES for w in re.findall(r"[A-Za-z]{4,}", s)})


def sentence(rng: random.Random, n: int = 2) -> str:
    return " ".join(rng.choice(SENTENCES) for _ in range(n))


def fill(brain: Brain, count: int, rng: random.Random, batch: int = 20_000) -> None:
    done = 0
    while done < count:
        with brain.batch(actor="bench"):
            for _ in range(min(batch, count - done)):
                brain.add(sentence(rng), tags=[rng.choice(WORDS)])
                done += 1
    brain.flush_index()


def bench_adds(folder: Path, count: int) -> dict[str, float]:
    """`count` adds, one transaction each; CPU time too, as the machine is often shared."""
    rng = random.Random(1)
    texts = [(sentence(rng), [rng.choice(WORDS)]) for _ in range(count)]
    with Brain.open(folder / "adds.sqlite") as brain:
        start, cpu_start = time.perf_counter(), time.process_time()
        for content, tags in texts:
            brain.add(content, tags=tags)
        total, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    return {
        "count": count,
        "total_s": round(total, 3),
        "per_add_us": round(total / count * 1e6),
        "cpu_s": round(cpu, 3),
        "cpu_per_add_us": round(cpu / count * 1e6),
    }


def bench_updates(brain: Brain, n: int = 300) -> dict[str, float]:
    rng = random.Random(2)
    ids = brain.list_ids()
    samples = []
    for _ in range(n):
        trace_id = rng.choice(ids)
        samples.append(timed(lambda i=trace_id: brain.update(i, {"content": sentence(rng)})))
    return percentiles(samples)


def bench_search(brain: Brain, n: int = 200) -> dict[str, float]:
    rng = random.Random(3)
    # Words people search for: two words taken from one real sentence.
    queries = []
    while len(queries) < n:
        words = re.findall(r"[A-Za-z]{4,}", rng.choice(SENTENCES))
        if len(words) >= 2:
            queries.append(" ".join(rng.sample(words, 2)))
    samples = [timed(lambda q=q: brain.search(q, limit=20, record_recall=False)) for q in queries]
    return percentiles(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adds", type=int, default=20_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    args = parser.parse_args()
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        results["add_one_at_a_time"] = bench_adds(folder, args.adds)
        with Brain.open(folder / "adds.sqlite") as brain:
            results["update_at_20k"] = bench_updates(brain)
            results["keyword_search_at_20k"] = bench_search(brain)
        if args.big:
            with Brain.open(folder / "big.sqlite") as brain:
                start = time.perf_counter()
                fill(brain, args.big, random.Random(4))
                results["build_big_s"] = round(time.perf_counter() - start, 1)
                results[f"keyword_search_at_{args.big}"] = bench_search(brain)
                results[f"update_at_{args.big}"] = bench_updates(brain)
    emit("core", results)


if __name__ == "__main__":
    main()
