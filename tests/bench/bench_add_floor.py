"""The floor under `brain.add`: the same statements in bare apsw, no memgui code around them.

    .venv/bin/python -m tests.bench.bench_add_floor [--adds 20000] [--dir FOLDER]

Each add is `BEGIN IMMEDIATE`, the trace row, its full-text pending mark, its journal row
(`{"version":1}`, as memgui journals an add) and `COMMIT`, under the writer lock, on a brain
memgui created (same tables, indexes, pragmas and checkpoint thread). `bare_add` empties the
pending table every `FLUSH_AFTER` adds and indexes nothing; `bare_add_indexed` is the whole
layout: every `FLUSH_AFTER`th add also writes the gathered rows into the three full-text
indexes (AgentOS's `memory_traces_fts`, `memgui_fts` and its stemmed twin) in its
transaction, as memgui's flush does, their text segmented beforehand (untimed). Prints wall
and CPU time per add, the median of each statement, the WAL frames one add writes, and the
disk's bound: those bytes must reach the disk (every checkpoint syncs the WAL), so
`disk_bound_us_per_add` is the WAL bytes of one add over the folder's measured
write-and-sync rate. `--dir /dev/shm` (a RAM disk) takes the disk out. `--alternate` also
runs `brain.add` and the indexed floor in turns, 500 adds each, and prints their ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import apsw
import orjson

from memgui.core.brain import Brain
from memgui.core.search import fulltext
from memgui.core.search.fulltext import MARK_NEW_SQL as _PENDING_SQL
from memgui.core.storage import store
from memgui.core.storage.db import Database
from tests.bench.bench_core import SENTENCES
from tests.bench.common import emit

_JOURNAL_SQL = (
    "INSERT INTO memgui_journal (brain_id, at, actor, batch_id, op, trace_id, before, after) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
STEPS = ("begin", "trace", "pending", "journal", "commit")


def _index_sql(db: Database) -> list[str]:
    """The statements a flush writes new rows with, one per full-text index of the brain."""
    out = [fulltext.INSERT_MEMGUI_FTS, fulltext.INSERT_STEMS]
    if db.has_agentos_fts:
        out.append("INSERT INTO memory_traces_fts(rowid, content, tags) VALUES (?, ?, ?)")
    return out


def bare_adds(path: Path, count: int, indexed: bool) -> dict[str, object]:
    with Brain.open(path) as brain:
        brain.add("the brain's first write records its meta rows")
    db = Database(path)  # memgui's pragmas (WAL, synchronous NORMAL, checkpoints)
    conn = db.conn
    index_sql = _index_sql(db)
    spent: dict[str, list[float]] = {step: [] for step in (*STEPS, "index")}
    contents = [
        f"{SENTENCES[i % len(SENTENCES)]} {SENTENCES[(i * 7) % len(SENTENCES)]}"
        for i in range(count)
    ]
    # The text as the indexes take it, made before the clock starts: the floor is SQLite's.
    segmented = [
        (c, *text[1:])
        for c, text in zip(
            contents,
            fulltext.indexed_text((0, c, '["bench"]', None) for c in contents),
            strict=True,
        )
    ]
    gathered: list[tuple[int, tuple[str, str, str, str]]] = []
    clock = time.perf_counter
    start, cpu_start = clock(), time.process_time()
    for i in range(count):
        content = contents[i]
        trace_id = f"mt_{os.urandom(16).hex()}"
        now = int(time.time() * 1000)
        meta = orjson.dumps({"content_hash": store.content_hash(content)}).decode()
        row = (None, "bench", trace_id, "episodic", "user", "", content, None, 1.0, now)
        row += (None, 0, '["bench"]', "{}", meta, 0, None, None, 1, now, 0)
        db.lock.acquire()  # as `Database.write`: the checkpoint thread's last pass takes it
        t0 = clock()
        conn.execute("BEGIN IMMEDIATE")
        t1 = clock()
        conn.execute(store.INSERT_SQL, row)
        rowid = conn.last_insert_rowid()
        t2 = clock()
        conn.execute(_PENDING_SQL, (rowid,))
        t3 = clock()
        journal = (f"b_{time.time_ns():x}", "add", trace_id, None, '{"version":1}')
        conn.execute(_JOURNAL_SQL, ("bench", now, "bench", *journal))
        t4 = clock()
        gathered.append((rowid, segmented[i]))
        if len(gathered) >= fulltext.FLUSH_AFTER:  # what a flush writes, in this transaction
            if indexed:
                for sql in index_sql:
                    if "memory_traces_fts" in sql:
                        rows = [(r, text[0], '["bench"]') for r, text in gathered]
                    else:
                        rows = [(r, *text[1:]) for r, text in gathered]
                    conn.executemany(sql, rows)
            conn.execute("DELETE FROM memgui_fts_pending")
            gathered = []
        t5 = clock()
        conn.execute("COMMIT")
        t6 = clock()
        db.lock.release()
        took = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5)
        for step, took_s in zip(STEPS, took, strict=True):
            spent[step].append(took_s)
        spent["index"].append(t5 - t4)
    wall, cpu = clock() - start, time.process_time() - cpu_start
    if db.checkpointer is not None:
        db.checkpointer.close()  # the frame count below checkpoints on this connection
    frames = frames_per_add(conn, path)
    db.close()
    return {
        "count": count,
        "per_add_us": round(wall / count * 1e6),
        "cpu_per_add_us": round(cpu / count * 1e6),
        "indexed": indexed,
        "median_us": {step: round(statistics.median(v) * 1e6, 1) for step, v in spent.items()},
        "mean_us": {step: round(statistics.fmean(v) * 1e6, 1) for step, v in spent.items()},
        "wal_frames_per_add": frames,
    }


def alternating(folder: Path, count: int, block: int = 500) -> dict[str, object]:
    """`brain.add` and the indexed floor's bare add taking turns, `block` adds each, on two
    new brains in one folder: the ratio with the machine's load the same for both. CPU is
    the writing thread's (`thread_time`: the checkpoint threads of both are left out)."""
    contents = [
        f"{SENTENCES[i % len(SENTENCES)]} {SENTENCES[(i * 7) % len(SENTENCES)]}"
        for i in range(count)
    ]
    segmented = [
        text[1:] for text in fulltext.indexed_text((0, c, '["bench"]', None) for c in contents)
    ]
    floor_path = folder / "alternate-floor.sqlite"
    with Brain.open(floor_path) as first:
        first.add("the brain's first write records its meta rows")
    db = Database(floor_path)
    index_sql = _index_sql(db)
    gathered: list[tuple[int, int]] = []
    spent = {"memgui": [0.0, 0.0], "floor": [0.0, 0.0]}  # wall, CPU
    with Brain.open(folder / "alternate-memgui.sqlite") as brain:
        brain.add("the brain's first write records its meta rows")
        for start in range(0, count, block):
            part = range(start, min(count, start + block))
            wall, cpu = time.perf_counter(), time.thread_time()
            for i in part:
                brain.add(contents[i], tags=["bench"])
            spent["memgui"][0] += time.perf_counter() - wall
            spent["memgui"][1] += time.thread_time() - cpu
            wall, cpu = time.perf_counter(), time.thread_time()
            for i in part:
                _bare_add(db, index_sql, contents[i], gathered, i, segmented)
            spent["floor"][0] += time.perf_counter() - wall
            spent["floor"][1] += time.thread_time() - cpu
    db.close()
    out: dict[str, object] = {
        who: {"per_add_us": round(w / count * 1e6), "cpu_per_add_us": round(c / count * 1e6)}
        for who, (w, c) in spent.items()
    }
    out["wall_over_floor"] = round(spent["memgui"][0] / spent["floor"][0], 2)
    out["cpu_over_floor"] = round(spent["memgui"][1] / spent["floor"][1], 2)
    return {"count": count, "block": block, **out}


def _bare_add(
    db: Database,
    index_sql: list[str],
    content: str,
    gathered: list[tuple[int, int]],
    i: int,
    segmented: list[tuple[str, str, str]],
) -> None:
    """One add of `bare_add_indexed`, without the clock between its statements."""
    conn = db.conn
    trace_id = f"mt_{os.urandom(16).hex()}"
    now = int(time.time() * 1000)
    meta = orjson.dumps({"content_hash": store.content_hash(content)}).decode()
    row = (None, "bench", trace_id, "episodic", "user", "", content, None, 1.0, now)
    row += (None, 0, '["bench"]', "{}", meta, 0, None, None, 1, now, 0)
    with db.lock:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(store.INSERT_SQL, row)
        rowid = conn.last_insert_rowid()
        conn.execute(_PENDING_SQL, (rowid,))
        journal = (f"b_{time.time_ns():x}", "add", trace_id, None, '{"version":1}')
        conn.execute(_JOURNAL_SQL, ("bench", now, "bench", *journal))
        gathered.append((rowid, i))
        if len(gathered) >= fulltext.FLUSH_AFTER:
            for sql in index_sql:
                if "memory_traces_fts" in sql:
                    rows = [(r, db_text, '["bench"]') for r, db_text in _contents(gathered, conn)]
                else:
                    rows = [(r, *segmented[n]) for r, n in gathered]
                conn.executemany(sql, rows)
            conn.execute("DELETE FROM memgui_fts_pending")
            gathered.clear()
        conn.execute("COMMIT")


def _contents(gathered: list[tuple[int, int]], conn: apsw.Connection) -> list[tuple[int, str]]:
    """The rows' text for AgentOS's index, as a flush reads it back with the pending rows."""
    marks = ",".join("?" * len(gathered))
    return list(
        conn.execute(
            f"SELECT rowid, content FROM memory_traces WHERE rowid IN ({marks})",
            [r for r, _ in gathered],
        )
    )


def disk_write_rate(folder: Path, megabytes: int = 256) -> float:
    """MB/s of sequential 4 KiB writes followed by one fsync: how a checkpoint meets the WAL."""
    page = os.urandom(4096)
    target = folder / "rate.bin"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        start = time.perf_counter()
        for i in range(megabytes * 256):
            os.pwrite(fd, page, i * 4096)
        os.fsync(fd)
        return megabytes / (time.perf_counter() - start)
    finally:
        os.close(fd)
        target.unlink()


def frames_per_add(conn: apsw.Connection, path: Path, rows: int = 50) -> float:
    """WAL frames (one page each) a single add appends: the bytes a checkpoint must sync."""
    conn.wal_autocheckpoint(0)
    conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
    for i in range(rows):
        trace_id = f"mt_frames_{os.urandom(8).hex()}"
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            store.INSERT_SQL,
            (None, "bench", trace_id, "episodic", "user", "", SENTENCES[i], None, 1.0, i)
            + (None, 0, "[]", "{}", "{}", 0, None, None, 1, i, 0),
        )
        conn.execute(_PENDING_SQL, (conn.last_insert_rowid(),))
        conn.execute(_JOURNAL_SQL, ("bench", i, "bench", f"b_{i}", "add", trace_id, None, "{}"))
        conn.execute("COMMIT")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    wal_bytes = Path(f"{path}-wal").stat().st_size - 32  # the WAL header
    return round(wal_bytes / (page_size + 24) / rows, 1)  # each frame: 24-byte header + page


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--adds", type=int, default=20_000)
    parser.add_argument("--dir", default=None, help="folder of the brain (default: the temp dir)")
    parser.add_argument(
        "--alternate", action="store_true", help="also brain.add and the indexed floor in turns"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bare = bare_adds(Path(tmp) / "floor.sqlite", args.adds, indexed=False)
        bare_indexed = bare_adds(Path(tmp) / "indexed.sqlite", args.adds, indexed=True)
        turns = alternating(Path(tmp), args.adds) if args.alternate else None
        rate = disk_write_rate(Path(tmp))
    wal_bytes = bare["wal_frames_per_add"] * (4096 + 24)
    disk = {
        "write_and_sync_mb_s": round(rate),
        "wal_bytes_per_add": round(wal_bytes),
        "disk_bound_us_per_add": round(wal_bytes / (rate * 1e6) * 1e6),
        "disk_bound_s": round(wal_bytes * args.adds / (rate * 1e6), 2),
    }
    emit(
        "add_floor",
        {
            "folder": args.dir or tempfile.gettempdir(),
            "bare_add": bare,
            "bare_add_indexed": bare_indexed,
            "memgui_and_indexed_floor_in_turns": turns,
            "disk": disk,
        },
    )


if __name__ == "__main__":
    main()
