"""Export benchmark: the SQLite export of a brain against its JSON export, in the same run.

    .venv/bin/python -m tests.bench.bench_export [--traces 100000] [--brain PATH]

Fills a fresh brain with `--traces` traces (or copies `--brain`, never writing the original),
then exports it as SQLite and as JSON, alternating the order over `--rounds` rounds, and
prints the wall and CPU seconds of each with the load average when it started. The target is
a SQLite export no slower than the JSON export of the same brain (`sqlite_over_json` <= 1, best
wall against best wall; `sqlite_over_json_cpu` is the same for CPU seconds).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.io.exporters.export import export
from memgui.core.progress import run_to_end
from tests.bench.bench_core import fill
from tests.bench.common import emit


def timed_export(brain: Brain, dest: Path, fmt: str) -> dict[str, Any]:
    load = os.getloadavg()[0]
    start, start_cpu = time.perf_counter(), time.process_time()
    result = run_to_end(export(brain, dest, fmt))
    took, took_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    size = dest.stat().st_size
    dest.unlink()
    return {
        "exported": result.exported,
        "load_average_1m": round(load, 2),
        "s": round(took, 3),
        "cpu_s": round(took_cpu, 3),
        "file_mb": round(size / 1e6, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--brain", type=Path, help="export a copy of this brain instead")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "brain.sqlite"
        if args.brain is not None:
            shutil.copyfile(args.brain, path)
        with Brain.open(path, actor="bench") as brain:
            if args.brain is None:
                fill(brain, args.traces, random.Random(20))
            runs: dict[str, list[dict[str, Any]]] = {"sqlite": [], "json": []}
            for round_number in range(args.rounds):
                order = ("sqlite", "json") if round_number % 2 == 0 else ("json", "sqlite")
                for fmt in order:
                    runs[fmt].append(timed_export(brain, folder / f"out.{fmt}", fmt))
    best = {fmt: min(run["s"] for run in taken) for fmt, taken in runs.items()}
    best_cpu = {fmt: min(run["cpu_s"] for run in taken) for fmt, taken in runs.items()}
    emit(
        "export",
        {
            "source": str(args.brain) if args.brain else f"generated, {args.traces} traces",
            "runs": runs,
            "best_s": best,
            "sqlite_over_json": round(best["sqlite"] / best["json"], 2),
            "best_cpu_s": best_cpu,
            "sqlite_over_json_cpu": round(best_cpu["sqlite"] / best_cpu["json"], 2),
            "target": "sqlite_over_json <= 1",
        },
    )


if __name__ == "__main__":
    main()
