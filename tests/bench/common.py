"""Helpers shared by the benchmarks: machine facts, percentiles, JSON output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.progress import gc_paused
from memgui.core.storage import bulk_rows

CACHE = Path(tempfile.gettempdir()) / "memgui-bench"  # brains built once, kept between runs


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average": load,
    }


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(pick(0.95) * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
        "n": len(ordered),
    }


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def cached_brain(name: str, fill: Callable[[Path], None]) -> Path:
    """CACHE/NAME.sqlite, made by `fill(path)` unless a finished one is there (a build that
    did not finish is removed and made again)."""
    path = CACHE / f"{name}.sqlite"
    done = path.with_suffix(".done")
    if path.exists() and done.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    for stale in CACHE.glob(f"{name}.sqlite*"):
        stale.unlink()
    fill(path)
    done.write_text(name)
    return path


def fill_traces(
    path: Path, count: int, snapshot: Callable[[int], dict[str, Any]], chunk: int = 50_000
) -> Brain:
    """Open a new brain at `path` and insert `count` traces, `snapshot(i)` each, in bulk
    (`bulk_rows.insert_traces`, `chunk` a write); the caller closes the brain it returns."""
    brain = Brain.open(path, "bench")
    with gc_paused():
        for start in range(0, count, chunk):
            snaps = [snapshot(i) for i in range(start, min(count, start + chunk))]
            with brain.write("import", kind="import") as batch:
                bulk_rows.insert_traces(brain.db, batch, brain.brain_id, snaps, "import")
    return brain


def emit(name: str, results: dict[str, Any]) -> None:
    print(json.dumps({"benchmark": name, "machine": machine(), **results}, indent=2))


@contextmanager
def agentos_service(path: Path) -> Iterator[Any]:
    """memgui's agentos-profile tools on the brain at `path` as a server runs them: a
    `ToolService` with its upkeep started (Ollama down: a dead port), closed after."""
    from memgui.server.runtime import ServerOptions, ToolService

    options = ServerOptions(path, None, "http://127.0.0.1:9", "nomic-embed-text",
                            profile="agentos", maintenance_interval=86_400)  # fmt: skip
    service = ToolService(options, actor="bench").start()
    try:
        assert service.maintainer is not None  # a brain file has its upkeep
        service.maintainer.wait_for_ticks(1, 120)
        yield service
    finally:
        service.close()


def call_tool(service: Any, name: str, arguments: dict[str, Any]) -> Any:
    """One tool call as a server makes it, its bookkeeping after the answer included."""
    result = service.call_now(name, arguments, "bench", True)
    if result.after is not None:
        result.after()
    return result
