"""Every benchmark, one process each, in one JSON document (`make bench`).

    .venv/bin/python -m tests.bench.run_all [--quick] [--only NAME ...] [--list]

Each benchmark runs as `python -m tests.bench.NAME ARGS` with the sizes docs/performance.md
quotes (`--quick`: small sizes that finish in minutes, to see that every benchmark still
runs; their numbers are not the documented ones). The document holds the machine, and for
each benchmark its arguments, wall seconds, the load average before it, its exit status and
the JSON it printed (or the tail of what it printed, when that was not JSON). A benchmark
that fails is reported and the rest still run; the exit status is 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

from tests.bench.common import machine
from tests.support.paths import ROOT

# name: (the documented run's arguments, the quick run's)
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "bench_add_floor": ([], ["--adds", "2000"]),
    "bench_forget_floor": ([], ["--traces", "2000"]),
    "bench_core": ([], ["--adds", "2000", "--big", "0"]),
    "bench_search_floor": ([], ["--big", "50000"]),
    "bench_word_forms": ([], ["--big", "20000"]),
    "bench_keyword": (["--big", "1000000"], ["--sizes", "2000", "--rounds", "1"]),
    "bench_vectors": ([], ["--sizes", "20000"]),
    "bench_hybrid": ([], ["--size", "20000", "--queries", "10"]),
    "bench_backfill": ([], ["--traces", "1000"]),
    "bench_import": ([], ["--traces", "2000", "--jsonl", "5000", "--chatgpt-mb", "5"]),
    "bench_import_floor": ([], ["--records", "5000"]),
    "bench_export": ([], ["--traces", "5000", "--rounds", "1"]),
    "bench_import_ui": ([], ["--runs", "1"]),
    "bench_ui": ([], ["--traces", "20000", "--runs", "1"]),
    "bench_graph": ([], ["--traces", "30000", "--overview-traces", "5000", "--runs", "1"]),
    "bench_servers": ([], ["--traces", "2000", "--adds", "100", "--queries", "50"]),
    "bench_agentos_ops": ([], ["--sizes", "2000", "--ops", "50", "--rounds", "1"]),
    "bench_search_pieces": ([], ["--size", "2000", "--adds", "64", "--rounds", "1"]),
    "bench_agentos_search": ([], ["--sizes", "2000", "--adds", "64", "--rounds", "2"]),
    "bench_agentos_writes": ([], ["--sizes", "2000", "--ops", "50"]),
    "bench_stalls": ([], ["--traces", "5000", "--ops", "500", "--block", "250"]),
    "bench_busy_wait": ([], ["--trials", "10", "--rows", "2000", "7000"]),
    "bench_background_index": ([], ["--traces", "2000", "--writes", "300"]),
    "bench_ollama_calls": ([], ["--requests", "30", "--rounds", "1"]),
    "bench_changes": ([], ["--ops", "300", "--rounds", "1"]),
    "bench_consolidate": ([], ["--traces", "2000", "--rounds", "1"]),
    "bench_postgres": ([], ["--traces", "10000", "--queries", "60"]),
    "bench_postgres_vectors": (["--hnsw"], ["--traces", "5000", "--queries", "20"]),
    "bench_pg_cas": ([], ["--writers", "10", "--rounds", "100"]),
    # Needs the build (make package) and Xvfb: without them it reports why and exits non-zero.
    "bench_startup": ([], ["--runs", "1"]),
    "bench_pg_notify": ([], ["--adds", "200", "--rounds", "1", "--bulk", "10000"]),
    "bench_shared_ui": ([], ["--traces", "5000", "--runs", "1"]),
    "bench_shared_graph": ([], ["--traces", "5000", "--runs", "1"]),
    "bench_shared_import_ui": (
        ["--traces", "100000", "--notes", "200", "--runs", "3"],
        ["--traces", "5000", "--notes", "20", "--runs", "1"],
    ),
}
OUTPUT_TAIL = 2000  # characters of a benchmark's output kept when it is not JSON


def run_one(name: str, argv: list[str]) -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", f"tests.bench.{name}", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")},
    )
    entry: dict[str, Any] = {
        "name": name,
        "argv": argv,
        "seconds": round(time.perf_counter() - began, 1),
        "load_average_before": load,
        "exit_code": done.returncode,
    }
    try:
        entry["result"] = json.loads(done.stdout)
    except ValueError:
        entry["output_tail"] = done.stdout[-OUTPUT_TAIL:]
    if done.returncode != 0:
        entry["stderr_tail"] = done.stderr[-OUTPUT_TAIL:]
    return entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: minutes, not hours")
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), metavar="NAME")
    parser.add_argument("--list", action="store_true", help="name the benchmarks and stop")
    args = parser.parse_args(argv)
    names = args.only or list(BENCHMARKS)
    if args.list:
        print("\n".join(names))
        return 0
    entries = []
    for name in names:
        full, quick = BENCHMARKS[name]
        print(f"running {name}…", file=sys.stderr, flush=True)
        entries.append(run_one(name, quick if args.quick else full))
    report = {"machine": machine(), "quick": args.quick, "benchmarks": entries}
    print(json.dumps(report, indent=2))
    return 0 if all(entry["exit_code"] == 0 for entry in entries) else 1


if __name__ == "__main__":
    sys.exit(main())
