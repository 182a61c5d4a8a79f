"""Helpers shared by the benchmarks: machine facts, percentiles, JSON output."""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any


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


def emit(name: str, results: dict[str, Any]) -> None:
    print(json.dumps({"benchmark": name, "machine": machine(), **results}, indent=2))
