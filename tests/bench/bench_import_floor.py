"""The floor under a 100k-record JSONL import: its parse and its SQL, no memgui code around them.

    .venv/bin/python -m tests.bench.bench_import_floor [--records 100000]

Imports the benchmark's agent-memory JSONL file once with memgui, reads back exactly the rows
that import wrote (trace rows, journal rows, the text of the three full-text indexes), then times
the parts no import can skip: `orjson.loads` of every line, and writing those same rows into a
fresh brain in one transaction with one `executemany` per table (the way the import writes
them). Their sum is what any plan + commit of the file costs on this machine before a line of
checking, classifying or building rows; the targets are 5 s for the whole import and at most
twice the floor (`memgui_over_floor`, wall; `memgui_over_floor_cpu`, CPU seconds of this
process, steadier on a shared machine). It also prints the journal's size against the text's.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from memgui.core.brain import Brain
from memgui.core.io.planning.plan import ImportOptions, plan
from memgui.core.io.writing.commit import commit
from memgui.core.progress import run_to_end
from memgui.core.search import fulltext
from memgui.core.storage import bulk_rows, store
from memgui.core.storage.db import Database
from tests.bench.bench_import import jsonl_export
from tests.bench.common import emit

JOURNAL_COLUMNS = "brain_id, at, actor, batch_id, op, trace_id, before, after"


def parse_seconds(source: Path) -> float:
    start = time.perf_counter()
    with source.open("rb") as lines:
        for raw in lines:
            orjson.loads(raw)
    return time.perf_counter() - start


def written_rows(brain: Brain) -> dict[str, list[tuple[Any, ...]]]:
    """What the real import wrote, as the parameters of the statements that wrote it."""
    conn = brain.db.conn
    traces = conn.execute(f"SELECT {store._INSERT_COLUMNS} FROM memory_traces").fetchall()
    journal = conn.execute(f"SELECT {JOURNAL_COLUMNS} FROM memgui_journal").fetchall()
    texts = conn.execute(fulltext.ROW_TEXT_SQL).fetchall()
    return {
        "traces": traces,
        "journal": journal,
        "agentos_fts": [row[:3] for row in texts],
        "memgui_fts": list(fulltext.indexed_text(texts)),
        "memgui_stems": list(fulltext.indexed_text(texts)),  # schema 9: the same, stemmed
    }


STATEMENTS = {
    "traces": store.INSERT_SQL,
    "journal": f"INSERT INTO memgui_journal ({JOURNAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "agentos_fts": "INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, ?)",
    "memgui_fts": fulltext.INSERT_MEMGUI_FTS,
    "memgui_stems": fulltext.INSERT_STEMS,
}


def sql_seconds(path: Path, rows: dict[str, list[tuple[Any, ...]]]) -> dict[str, float]:
    db = Database(path)
    conn = db.conn
    spent: dict[str, float] = {}
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    # As the import's bulk insert does: the triggers that watch other programs' inserts are
    # paused inside the transaction (memgui marks its own rows).
    with bulk_rows.insert_triggers_paused(db, len(rows["traces"])):
        for table, sql in STATEMENTS.items():
            began = time.perf_counter()
            conn.executemany(sql, rows[table])
            spent[table] = time.perf_counter() - began
    began = time.perf_counter()
    conn.execute("COMMIT")
    spent["commit"] = time.perf_counter() - began
    spent["total"] = time.perf_counter() - start
    db.close()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = jsonl_export(folder / "memories.jsonl", args.records, random.Random(11))
        with Brain.open(folder / "imported.sqlite", actor="bench") as brain:
            start, start_cpu = time.perf_counter(), time.process_time()
            the_plan = run_to_end(plan(brain, source, options=ImportOptions(format="jsonl")))
            planned = time.perf_counter()
            run_to_end(commit(brain, the_plan))
            done, done_cpu = time.perf_counter(), time.process_time()
            journal_mb = brain.db.conn.execute(
                "SELECT (total(length(before)) + total(length(after))) / 1e6 FROM memgui_journal"
            ).get
            text_mb = brain.db.conn.execute(
                "SELECT sum(length(CAST(content AS BLOB))) / 1e6 FROM memory_traces"
            ).get
            rows = written_rows(brain)
        Brain.open(folder / "floor.sqlite", actor="bench").close()  # a new, empty brain
        floor_cpu = time.process_time()
        parse = parse_seconds(source)
        sql = sql_seconds(folder / "floor.sqlite", rows)
        floor_cpu = time.process_time() - floor_cpu
    emit(
        "import_floor",
        {
            "records": args.records,
            "memgui_plan_s": round(planned - start, 3),
            "memgui_commit_s": round(done - planned, 3),
            "floor_parse_s": round(parse, 3),
            "floor_sql_s": {name: round(took, 3) for name, took in sql.items()},
            "floor_total_s": round(parse + sql["total"], 3),
            "memgui_over_floor": round((done - start) / (parse + sql["total"]), 2),
            "memgui_cpu_s": round(done_cpu - start_cpu, 3),
            "floor_cpu_s": round(floor_cpu, 3),
            "memgui_over_floor_cpu": round((done_cpu - start_cpu) / floor_cpu, 2),
            "journal_mb": round(journal_mb or 0, 1),
            "text_mb": round(text_mb or 0, 1),
            "target": "memgui_over_floor <= 2",
            "target_s": 5.0,
        },
    )


if __name__ == "__main__":
    main()
