"""`brain.forget` against the floor of its statements in bare apsw, in one run.

    .venv/bin/python -m tests.bench.bench_forget_floor [--traces 8000]

Adds `--traces` traces in one batch, then forgets them one call each: the first 500 warm up,
the next half are timed through `brain.forget`, the rest through the same statements a forget
runs, in bare apsw under the writer lock (`BEGIN IMMEDIATE`, the row read, the `UPDATE` of
its three columns, the vector-cache log row, the journal row of the changed fields,
`COMMIT`). Prints the p50 of each, the median of each bare statement, and the journal bytes
one forget writes. AgentOS's own delete is timed by `make bench-agentos`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.search import vectors
from memgui.core.storage import store
from tests.bench.common import emit

STEPS = ("begin", "read", "update", "vector_log", "journal", "commit")
_JOURNAL_SQL = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def bare_forgets(brain: Brain, ids: list[str]) -> dict[str, list[float]]:
    conn, bid = brain.db.conn, brain.brain_id
    columns = store.select_columns(brain.db)
    log_sql = f"INSERT INTO {vectors.LOG_TABLE}(brain_id, trace_rowid) VALUES (?, ?)"
    spent: dict[str, list[float]] = {step: [] for step in (*STEPS, "total")}
    clock = time.perf_counter
    for n, trace_id in enumerate(ids):
        brain.db.lock.acquire()
        t0 = clock()
        conn.execute("BEGIN IMMEDIATE")
        t1 = clock()
        row = conn.execute(
            f"SELECT {columns} FROM memory_traces WHERE brain_id = ? AND id = ?", (bid, trace_id)
        ).fetchone()
        t2 = clock()
        conn.execute(
            "UPDATE memory_traces SET deleted = 1, version = ?, updated_at = ? WHERE rowid = ?",
            (row[16] + 1, n, row[0]),
        )
        t3 = clock()
        conn.execute(log_sql, (bid, row[0]))
        t4 = clock()
        old = f'{{"deleted":false,"version":{row[16]},"updated_at":{row[17]}}}'
        new = f'{{"deleted":true,"version":{row[16] + 1},"updated_at":{n}}}'
        conn.execute(_JOURNAL_SQL, (bid, n, "bench", f"b_bare_{n}", "forget", trace_id, old, new))
        t5 = clock()
        conn.execute("COMMIT")
        t6 = clock()
        brain.db.lock.release()
        marks = (t0, t1, t2, t3, t4, t5, t6)
        for i, step in enumerate(STEPS):
            spent[step].append(marks[i + 1] - marks[i])
        spent["total"].append(t6 - t0)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=8000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Brain.open(Path(tmp) / "b.sqlite") as brain:
        with brain.batch():
            ids = [
                brain.add(f"memory number {i} about the deployment window and its review").id
                for i in range(args.traces)
            ]
        brain.forget(ids[0])  # makes the vector-cache log table the bare loop writes
        for trace_id in ids[1:500]:
            brain.forget(trace_id)
        rest = ids[500:]
        half = len(rest) // 2
        timed = []
        for trace_id in rest[:half]:
            start = time.perf_counter()
            brain.forget(trace_id)
            timed.append(time.perf_counter() - start)
        journal_bytes = brain.db.conn.execute(
            "SELECT avg(length(before) + length(after)) FROM memgui_journal WHERE op = 'forget'"
        ).get
        bare = bare_forgets(brain, rest[half:])
    p50 = statistics.median(timed)
    floor = statistics.median(bare["total"])
    emit(
        "forget_floor",
        {
            "traces": args.traces,
            "forget_p50_us": round(p50 * 1e6, 1),
            "floor_p50_us": round(floor * 1e6, 1),
            "forget_over_floor": round(p50 / floor, 2),
            "floor_median_us": {s: round(statistics.median(v) * 1e6, 1) for s, v in bare.items()},
            "journal_bytes_per_forget": round(journal_bytes or 0, 1),
        },
    )


if __name__ == "__main__":
    main()
