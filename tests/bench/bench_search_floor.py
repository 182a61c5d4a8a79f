"""The floor under keyword search at 1M traces: FTS5's own statements, no memgui code around them.

    .venv/bin/python -m tests.bench.bench_search_floor [--big 1000000] [--brain PATH]

Builds a brain of `--big` traces as `bench_core` does (or opens `--brain`, e.g. one kept from
an earlier run with `--keep PATH`), then runs bench_core's 200 two-word queries through raw
FTS5 statements on memgui's full-text index, each timed alone: enumerating the matches,
bm25 of the newest 20 (FTS5 still counts every match of each word for its IDF first), bm25 of
every match, FTS5's own best-20 by bm25 (`ORDER BY rank LIMIT 20`) and the best 20 by
`ORDER BY bm25(…)` — the least any search that ranks all matches by FTS5's bm25 pays.
`brain.search` runs the same queries for comparison. Two rounds; the second is reported
(warm cache).
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import tempfile
import time
from pathlib import Path

from memgui.core.brain import Brain
from tests.bench.bench_core import SENTENCES, fill
from tests.bench.common import emit, percentiles

STATEMENTS = {
    "enumerate_newest_20": (
        "SELECT rowid FROM memgui_fts WHERE memgui_fts MATCH ? ORDER BY rowid DESC LIMIT 20"
    ),
    "bm25_newest_20": (
        "SELECT rowid, bm25(memgui_fts) FROM memgui_fts WHERE memgui_fts MATCH ? "
        "ORDER BY rowid DESC LIMIT 20"
    ),
    "bm25_every_match": "SELECT rowid, bm25(memgui_fts) FROM memgui_fts WHERE memgui_fts MATCH ?",
    "fts5_best_20_by_bm25": (
        "SELECT rowid FROM memgui_fts WHERE memgui_fts MATCH ? ORDER BY rank LIMIT 20"
    ),
    # What memgui's exact ranking runs: the sorter keeps the best 20 of bm25 over every match.
    "best_20_by_bm25_order": (
        "SELECT bm25(memgui_fts) AS score, rowid FROM memgui_fts WHERE memgui_fts MATCH ? "
        "ORDER BY score, rowid LIMIT 20"
    ),
}


def queries(n: int = 200) -> list[list[str]]:
    """bench_core's queries (same seed): two words taken from one real sentence."""
    rng = random.Random(3)
    out: list[list[str]] = []
    while len(out) < n:
        words = re.findall(r"[A-Za-z]{4,}", rng.choice(SENTENCES))
        if len(words) >= 2:
            out.append(rng.sample(words, 2))
    return out


def fts_query(words: list[str]) -> str:
    return " ".join(f'"{word.lower()}"' for word in words)


def measure(brain: Brain, rounds: int = 2) -> dict[str, object]:
    conn = brain.db.conn
    asked = queries()
    results: dict[str, object] = {}
    for _ in range(rounds):
        for name, sql in STATEMENTS.items():
            samples = []
            for words in asked:
                start = time.perf_counter()
                conn.execute(sql, (fts_query(words),)).fetchall()
                samples.append(time.perf_counter() - start)
            results[name] = percentiles(samples)
        samples = []
        for words in asked:
            start = time.perf_counter()
            brain.search(" ".join(words), limit=20, record_recall=False)
            samples.append(time.perf_counter() - start)
        results["memgui_search_limit_20"] = percentiles(samples)
    count_sql = "SELECT count(*) FROM memgui_fts WHERE memgui_fts MATCH ?"
    counts = sorted(conn.execute(count_sql, (fts_query(w),)).fetchall()[0][0] for w in asked)
    results["matches_per_query"] = {"p50": counts[len(counts) // 2], "p95": counts[190]}
    return results


def built_brain(brain: Path | None, big: int, folder: str) -> tuple[Path, dict[str, object]]:
    """`brain`, or one of `big` traces built in `folder` as bench_core builds it."""
    path = brain or Path(folder) / "big.sqlite"
    results: dict[str, object] = {"brain": str(brain or f"built, {big} traces")}
    if brain is None:
        with Brain.open(path) as built:
            start = time.perf_counter()
            fill(built, big, random.Random(4))
            results["build_big_s"] = round(time.perf_counter() - start, 1)
    return path, results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--brain", type=Path, help="an existing brain to measure instead")
    parser.add_argument("--keep", type=Path, help="keep the built brain at this path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, results = built_brain(args.brain, args.big, tmp)
        with Brain.open(path) as brain:
            results["traces"] = brain.info()["traces"]
            results.update(measure(brain))
        if args.keep and args.brain is None:
            shutil.copyfile(path, args.keep)
    emit("search_floor", results)


if __name__ == "__main__":
    main()
