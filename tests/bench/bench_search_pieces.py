"""Where the agentos tool's keyword search spends its time, against AgentOS's one statement.

    .venv/bin/python -m tests.bench.bench_search_pieces [--size 5000] [--adds 220]
        [--rounds 2]

A brain of `--size` traces (bench_servers' sentences, as `make bench-agentos` builds it) is
searched in two states: as built (each full-text index one segment) and after `--adds`
single adds through the tool (a flush every 32 adds, each a segment: what the AgentOS pair's
searches meet, 200 adds before them; no upkeep merges them here). In each state the 200
two-word queries of bench_keyword (limit 10) run one by one, each contender in turn on the
same connection:
- `agentos_statement`: the statement AgentOS's `memory_search` runs (its own index, bm25
  only, the rows joined), through apsw with no code around it;
- `ranking`: memgui's ranking statement alone (`memgui_bm25` on `memgui_stems`, the LIMIT a
  search of limit 10 asks);
- `ranking_and_rows`: it and the statement reading the first slice of candidates' rows with
  their decayed strength — the SQL of the general way's exact blended ranking;
- `least_sql`: the least any exact answer runs: a ranking of only the `limit` best by bm25
  joined with those rows (the tool's columns, `store.BRIEF_COLUMNS`) with their decayed
  strength (not enough to prove the blend: a floor);
- `keyword_rows`: `searching.keyword_rows`, all of memgui's code that gives the ranked rows
  (`keyword_quick` first: one short ranking and its rows, when it proves the answer);
- `keyword_rows_general`: the same without `keyword_quick` (the general way alone);
- `tool`: the agentos profile's `memory_search` (`tools.call`, what a server runs).
p50 of the later round in µs (its pages and statements warm; no document count kept from
the round before, as each search of the pair asks a new query), and each over
`agentos_statement`.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import fts_merge, keyword, searching, stems
from memgui.core.tools import ToolContext, call, profile
from tests.bench.bench_core import sentence
from tests.bench.bench_keyword import asked
from tests.bench.bench_servers import AGENTOS_SEARCH_SQL, build
from tests.bench.common import emit

LIMIT = 10
TOOLS = profile("agentos")


def contenders(path: Path) -> tuple[dict[str, Callable[[str], Any]], list[Any]]:
    """Each contender on a connection of its own: no ranking, no bm25 document count and no
    page another one read is shared (each search in the AgentOS pair asks a new query)."""
    agentos_conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    brains = [Brain.open(path, actor="bench", create=False) for _ in range(6)]
    for brain in brains:
        brain.search("warm", record_recall=False)  # statements prepared, nothing pending
    ranked_brain, rows_brain, rows_of_memgui, general_brain, tool_brain, least_brain = brains
    want = LIMIT * searching.OVERSAMPLE
    asked_rows = keyword.RANK_AHEAD * want + 2  # the LIMIT a search of LIMIT asks first
    first_slice = LIMIT + LIMIT // 4 + 2

    def ranking_of(brain: Brain) -> Callable[[str], list[Any]]:
        sql = keyword.statements(brain.db, stems.TABLE, brain.brain_id, TraceFilter())
        return lambda q: brain.db.conn.execute(sql.ranking, (stems.match(q), asked_rows)).fetchall()

    def ranking_and_rows(query: str) -> list[Any]:
        sql = keyword.statements(rows_brain.db, stems.TABLE, rows_brain.brain_id, TraceFilter())
        rowids = [rowid for _, rowid in ranking_of(rows_brain)(query)[:first_slice]]
        if not rowids:
            return []
        return rows_brain.db.conn.execute(*sql.rows(rows_brain.now(), rowids)).fetchall()

    def least_sql(query: str) -> list[Any]:
        # The agent tool's one statement (the ranking joined with the brief rows), ranking
        # only the `limit` best.
        sql = keyword.statements(least_brain.db, stems.TABLE, least_brain.brain_id, TraceFilter())
        return least_brain.db.conn.execute(
            sql.ranked_rows[True], (stems.match(query), LIMIT, least_brain.now(), *sql.params)
        ).fetchall()

    ctx = ToolContext(tool_brain, "bench", "keyword")
    pieces: dict[str, Callable[[str], Any]] = {
        "agentos_statement": lambda q: agentos_conn.execute(
            AGENTOS_SEARCH_SQL, (q, LIMIT)
        ).fetchall(),
        "ranking": ranking_of(ranked_brain),
        "ranking_and_rows": ranking_and_rows,
        "least_sql": least_sql,
        "keyword_rows": lambda q: searching.keyword_rows(rows_of_memgui, q, TraceFilter(), LIMIT),
        "keyword_rows_general": lambda q: searching.keyword_rows(
            general_brain, q, TraceFilter(), LIMIT, quick=False
        ),
        "tool": lambda q: call(ctx, TOOLS, "memory_search", {"query": q, "limit": LIMIT}),
    }
    return pieces, [agentos_conn, *brains]


def forget_document_counts(path: Path) -> None:
    """Another connection's commit: memgui_bm25 keeps each phrase's document count only
    while nothing was committed, so the next round counts them again, as a new query does."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_rounds(n)")
        conn.execute("INSERT INTO bench_rounds VALUES (1)")
    finally:
        conn.close()


def measured(path: Path, rounds: int) -> dict[str, Any]:
    pieces, opened = contenders(path)
    samples: dict[str, list[float]] = {}
    try:
        for _ in range(rounds):  # the later round is kept (warm pages and statements)
            samples = {name: [] for name in pieces}
            for query in asked():
                for name, run in pieces.items():
                    start = time.perf_counter()
                    run(query)
                    samples[name].append(time.perf_counter() - start)
            keyword._last_ranking.clear()  # the next round ranks again, as new queries do
            forget_document_counts(path)
        segments = fts_merge.segment_count(opened[1].db.conn, stems.TABLE)
    finally:
        for each in opened:
            each.close()
    p50 = {name: round(statistics.median(s) * 1e6, 1) for name, s in samples.items()}
    floor = p50["agentos_statement"]
    return {
        "segments": segments,
        "p50_us": p50,
        "over_agentos_statement": {name: round(v / floor, 2) for name, v in p50.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--adds", type=int, default=220)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memgui-search-pieces-"))
    try:
        path = folder / "brain.sqlite"
        build(path, args.size, random.Random(7))
        out: dict[str, Any] = {"traces": args.size, "adds": args.adds}
        out["as_built"] = measured(path, args.rounds)
        with Brain.open(path, actor="bench") as brain:
            ctx, rng = ToolContext(brain, "bench", "keyword"), random.Random(11)
            for _ in range(args.adds):
                call(ctx, TOOLS, "memory_add", {"content": sentence(rng)})
            brain.flush_index()
        out["after_adds"] = measured(path, args.rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    emit("search_pieces", out)


if __name__ == "__main__":
    main()
