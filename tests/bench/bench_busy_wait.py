"""How long a write waits for another connection's lock: SQLite's busy timeout against
memgui's busy handler (`storage/busy_wait.py`), in the same run.

    .venv/bin/python -m tests.bench.bench_busy_wait [--holds 3 9 20] [--trials 40]

Two connections to one WAL brain file in one process, as a writer and the upkeep's own
connection are: the holder begins a write, holds the lock `--holds` ms and commits; the
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
    if not bm25.load(conn):
        raise SystemExit("memgui_bm25 is not built: nothing to compare")
    return conn


def one_wait(
    holder: apsw.Connection, waiter: apsw.Connection, hold_s: float
) -> tuple[float, float]:
    """(the waiter's whole wait, its overshoot past the holder's commit), in seconds."""
    taken = threading.Event()
    released: list[float] = []

    def hold() -> None:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO t VALUES (1)")
        taken.set()
        time.sleep(hold_s)
        holder.execute("COMMIT")
        released.append(time.perf_counter())

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait()
    start = time.perf_counter()
    waiter.execute("BEGIN IMMEDIATE")
    got = time.perf_counter()
    waiter.execute("COMMIT")
    thread.join()
    return got - start, got - released[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--holds", type=float, nargs="+", default=[3, 9, 20])
    parser.add_argument("--trials", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgui-busy-") as folder:
        path = Path(folder) / "brain.sqlite"
        holder, waiter = connect(path), connect(path)
        holder.execute("CREATE TABLE t(x)")
        results: dict[str, Any] = {}
        for hold_ms in args.holds:
            waits: dict[str, list[float]] = {way: [] for way in WAYS}
            over: dict[str, list[float]] = {way: [] for way in WAYS}
            for trial in range(2 * args.trials):
                way = WAYS[trial % 2]
                if way == "sqlite_timeout":
                    waiter.setbusytimeout(10_000)
                else:
                    busy_wait.set_wait(waiter, 10_000)
                whole, past = one_wait(holder, waiter, hold_ms / 1000)
                waits[way].append(whole)
                over[way].append(past)
            row: dict[str, Any] = {
                way: {"wait": percentiles(waits[way]), "overshoot": percentiles(over[way])}
                for way in WAYS
            }
            row["ratio_p50"] = round(
                row["sqlite_timeout"]["overshoot"]["p50_ms"]
                / max(row["memgui_poll"]["overshoot"]["p50_ms"], 0.001),
                2,
            )
            results[f"{hold_ms:g}ms"] = row
        emit("busy_wait", {"trials": args.trials, "holds": results})


if __name__ == "__main__":
    main()
