"""How long a write waits for another connection's lock: SQLite's busy timeout against
memgui's busy handler (`storage/busy_wait.py`), in the same run.

    .venv/bin/python -m tests.bench.bench_busy_wait [--rows 2000 7000 17000] [--trials 40]

Two connections to one WAL brain file in one process, as a writer and the upkeep's own
connection are: the holder begins a write, writes `--rows` rows of 64 random bytes in one
statement (about 3, 9 and 20 ms here; each hold as measured is reported) and commits; the
waiter, started once the lock is taken, times its `BEGIN IMMEDIATE`. The overshoot is the
wait past the holder's commit (its floor is 0). The two ways alternate trial by trial, so
the machine's load falls on both alike. `ratio_p50` is SQLite's overshoot p50 over
memgui's: above 1, memgui's waits end sooner.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import apsw

from memgui.core.search import bm25
from memgui.core.storage import busy_wait
from tests.bench.common import emit, percentiles

WAYS = ("sqlite_timeout", "memgui_poll")


def connect(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # No checkpoint inside a commit (it runs after the lock is let go, and would be timed
    # as part of the hold); `one_wait` empties the WAL between trials instead.
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    if not bm25.load(conn):
        raise SystemExit("memgui_bm25 is not built: nothing to compare")
    return conn


FILL_SQL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
    "INSERT INTO t SELECT randomblob(64) FROM n"
)


def one_wait(
    holder: apsw.Connection, waiter: apsw.Connection, rows: int
) -> tuple[float, float, float]:
    """(the holder's hold of the lock, the waiter's whole wait, its overshoot past the
    holder's commit), in seconds."""
    taken = threading.Event()
    times: list[float] = []

    def hold() -> None:
        holder.execute("BEGIN IMMEDIATE")
        times.append(time.perf_counter())
        taken.set()
        holder.execute(FILL_SQL, (rows,))  # the lock held for a write's real work
        holder.execute("COMMIT")
        times.append(time.perf_counter())

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait()
    start = time.perf_counter()
    waiter.execute("BEGIN IMMEDIATE")
    got = time.perf_counter()
    waiter.execute("COMMIT")
    thread.join()
    holder.execute("DELETE FROM t")  # untimed: every trial starts from the same file
    holder.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
    return times[1] - times[0], got - start, got - times[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[2000, 7000, 17000])
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgui-busy-") as folder:
        path = Path(folder) / "brain.sqlite"
        holder, waiter = connect(path), connect(path)
        holder.execute("CREATE TABLE t(x)")
        results: dict[str, Any] = {}
        for rows in args.rows:
            holds: list[float] = []
            waits: dict[str, list[float]] = {way: [] for way in WAYS}
            over: dict[str, list[float]] = {way: [] for way in WAYS}
            for trial in range(2 * args.trials):
                way = WAYS[trial % 2]
                if way == "sqlite_timeout":
                    waiter.setbusytimeout(10_000)
                else:
                    busy_wait.set_wait(waiter, 10_000)
                held, whole, past = one_wait(holder, waiter, rows)
                holds.append(held)
                waits[way].append(whole)
                over[way].append(past)
            row: dict[str, Any] = {"hold": percentiles(holds)}
            for way in WAYS:
                row[way] = {"wait": percentiles(waits[way]), "overshoot": percentiles(over[way])}
            row["ratio_p50"] = round(
                row["sqlite_timeout"]["overshoot"]["p50_ms"]
                / max(row["memgui_poll"]["overshoot"]["p50_ms"], 0.001),
                2,
            )
            results[f"{rows}_rows"] = row
        emit("busy_wait", {"trials": args.trials, "holds": results})


if __name__ == "__main__":
    main()
