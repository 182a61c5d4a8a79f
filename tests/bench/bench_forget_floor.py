"""`brain.forget` against the floors of its statements in bare apsw, in one run.

    .venv/bin/python -m tests.bench.bench_forget_floor [--traces 8000]

Adds `--traces` traces in one batch, then forgets them one call each: the first 500 warm up,
the next half are timed through `brain.forget`, the rest through bare statements under the
writer lock, the layouts taking turns trace by trace:

- `journaled` — what a forget of a trace without a vector runs now: `BEGIN IMMEDIATE`, the
  row read, the `UPDATE` of its three columns, the journal row of the changed fields,
  `COMMIT` (4 b-tree pages: the row's leaf, the journal's and its two indexes');
- `journaled_vector_log` — the same and the vector-cache log row every forget wrote before
  (5 pages; what a trace with a vector still writes);
- `returning` — the read folded into the `UPDATE … RETURNING` (one statement fewer, same
  pages);
- `journal_unindexed` — `journaled` into a copy of the journal table without its two
  indexes (2 pages: the row's leaf and the journal's): the least any journaled forget
  writes, a bound for every journal design, since history and revert need the indexes;
- `unjournaled` — AgentOS's whole delete: one autocommit `UPDATE … SET deleted = 1` that
  records nothing (1 page), on the same file and page cache.

Prints the p50 of each, the median of each bare statement, the journal bytes one forget
writes and the machine's load. AgentOS's own delete is timed by `make bench-agentos`.
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

LAYOUTS = ("journaled", "journaled_vector_log", "returning", "journal_unindexed", "unjournaled")
_BARE_JOURNAL = "bench_journal_unindexed"
_JOURNAL_SQL = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE_SQL = "UPDATE memory_traces SET deleted = 1, version = ?, updated_at = ? WHERE rowid = ?"


def _journal_row(bid: str, n: int, trace_id: str, version: int, updated_at: int) -> tuple:
    old = f'{{"deleted":false,"version":{version},"updated_at":{updated_at}}}'
    new = f'{{"deleted":true,"version":{version + 1},"updated_at":{n}}}'
    return (bid, n, "bench", f"b_bare_{n}", "forget", trace_id, old, new)


def bare_forget(brain: Brain, layout: str, n: int, trace_id: str) -> dict[str, float]:
    """One forget in bare statements of `layout`; the time of each step, in seconds."""
    conn, bid = brain.db.conn, brain.brain_id
    clock = time.perf_counter
    marks = [("start", clock())]
    if layout == "unjournaled":
        conn.execute(
            "UPDATE memory_traces SET deleted = 1 WHERE brain_id = ? AND id = ?", (bid, trace_id)
        )
        marks.append(("update", clock()))
    else:
        conn.execute("BEGIN IMMEDIATE")
        marks.append(("begin", clock()))
        if layout == "returning":
            row = conn.execute(
                f"UPDATE memory_traces SET deleted = 1, version = version + 1, updated_at = ? "
                f"WHERE brain_id = ? AND id = ? RETURNING {store.select_columns(brain.db)}",
                (n, bid, trace_id),
            ).fetchone()
            marks.append(("update", clock()))
            version, updated_at = row[16] - 1, n
        else:
            row = conn.execute(
                f"SELECT {store.select_columns(brain.db)} FROM memory_traces "
                "WHERE brain_id = ? AND id = ?",
                (bid, trace_id),
            ).fetchone()
            marks.append(("read", clock()))
            conn.execute(_UPDATE_SQL, (row[16] + 1, n, row[0]))
            marks.append(("update", clock()))
            version, updated_at = row[16], row[17]
            if layout == "journaled_vector_log":
                conn.execute(
                    f"INSERT INTO {vectors.LOG_TABLE}(brain_id, trace_rowid) VALUES (?, ?)",
                    (bid, row[0]),
                )
                marks.append(("vector_log", clock()))
        sql = _JOURNAL_SQL
        if layout == "journal_unindexed":
            sql = sql.replace("memgui_journal", _BARE_JOURNAL)
        conn.execute(sql, _journal_row(bid, n, trace_id, version, updated_at))
        marks.append(("journal", clock()))
        conn.execute("COMMIT")
        marks.append(("commit", clock()))
    steps = {name: t - marks[i][1] for i, (name, t) in enumerate(marks[1:])}
    steps["total"] = marks[-1][1] - marks[0][1]
    return steps


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
        with brain.db.lock:  # the table a forget of an embedded trace writes
            vectors.ensure_log(brain.db.conn)
            brain.db.conn.execute(
                f"CREATE TABLE {_BARE_JOURNAL} AS SELECT * FROM memgui_journal WHERE 0"
            )
        for trace_id in ids[:500]:
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
        bare: dict[str, dict[str, list[float]]] = {layout: {} for layout in LAYOUTS}
        for n, trace_id in enumerate(rest[half:]):
            layout = LAYOUTS[n % len(LAYOUTS)]
            with brain.db.lock:
                steps = bare_forget(brain, layout, n, trace_id)
            for step, took in steps.items():
                bare[layout].setdefault(step, []).append(took)
    p50 = statistics.median(timed)
    floors = {layout: statistics.median(steps["total"]) for layout, steps in bare.items()}
    emit(
        "forget_floor",
        {
            "traces": args.traces,
            "forget_p50_us": round(p50 * 1e6, 1),
            "floor_p50_us": round(floors["journaled"] * 1e6, 1),
            "forget_over_floor": round(p50 / floors["journaled"], 2),
            "floors_p50_us": {layout: round(v * 1e6, 1) for layout, v in floors.items()},
            "forget_over_unjournaled": round(p50 / floors["unjournaled"], 2),
            "floor_median_us": {
                layout: {s: round(statistics.median(v) * 1e6, 1) for s, v in steps.items()}
                for layout, steps in bare.items()
            },
            "journal_bytes_per_forget": round(journal_bytes or 0, 1),
        },
    )


if __name__ == "__main__":
    main()
