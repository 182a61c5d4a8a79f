"""The app's Ollama calls: a job on the window's thread pool, against asyncio on the Qt loop.

    QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.bench.bench_ollama_calls [--requests 150]

The app asks Ollama whether it answers (`/api/tags`) and embeds a query (`/api/embed`, one
768-d vector) as jobs: `OllamaEmbedder` in a worker of a `JobRunner`, the result handed to the
GUI thread by a signal. The alternative is `ollama.AsyncClient` awaited on a qasync loop on
the GUI thread. Each is timed over `--requests` sequential requests to the test Ollama server
(in a process of its own): the latency from the request to its result on the GUI thread, the
GUI thread's CPU time per request (what a paint waits for), and the longest gap between the
ticks of a 5 ms timer on the GUI thread; for asyncio also the cost of making the client on
the GUI thread. Two rounds, alternating. The asyncio side needs `qasync` (not a dependency of
memgui: `pip install qasync` to measure it); without it only the jobs are measured. Prints
one JSON document.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from memgui.core.progress import Progress
from memgui.core.search.embed import OllamaEmbedder
from memgui.ui.jobs import JobRunner
from tests.bench.common import emit
from tests.support.paths import ROOT

MODEL = "nomic-embed-text"
TEXT = "the vehicle motor failed again on a cold morning"
SERVER = (
    "import sys; from tests.support.ollama_server import FakeOllama; "
    "print(FakeOllama().start().url, flush=True); sys.stdin.read()"  # until the bench ends
)


class Gaps:
    """The longest gap between the ticks of a 5 ms timer on the GUI thread."""

    def __init__(self) -> None:
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self._tick)
        self.last = self.worst = 0.0

    def start(self) -> None:
        self.last, self.worst = time.perf_counter(), 0.0
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst, self.last = max(self.worst, now - self.last), now

    def stop(self) -> float:
        self.timer.stop()
        return self.worst


def summary(path: str, latencies: list[float], cpu_s: float, worst_gap_s: float) -> dict[str, Any]:
    ordered = sorted(latencies)
    return {
        "path": path,
        "requests": len(ordered),
        "latency_p50_ms": round(statistics.median(ordered) * 1000, 2),
        "latency_p95_ms": round(ordered[int(0.95 * len(ordered))] * 1000, 2),
        "gui_cpu_per_request_ms": round(cpu_s / len(ordered) * 1000, 3),
        "longest_gui_gap_ms": round(worst_gap_s * 1000, 1),
    }


def by_jobs(url: str, kind: str, requests: int, gaps: Gaps) -> dict[str, Any]:
    runner = JobRunner(max_threads=2)
    embedder = OllamaEmbedder(url, MODEL)

    def job() -> Generator[Progress, None, object]:
        yield Progress(0, None, "asking Ollama")
        return embedder.status() if kind == "status" else embedder.embed([TEXT])

    loop = QEventLoop()

    def one_request() -> float:
        began = time.perf_counter()
        outcome: list[object] = []
        running = runner.start("similar", job)
        running.finished.connect(lambda value: (outcome.append(value), loop.quit()))
        running.failed.connect(lambda exc: (outcome.append(exc), loop.quit()))
        loop.exec()
        if not outcome or isinstance(outcome[0], BaseException):
            raise RuntimeError(f"the job failed: {outcome}")
        return time.perf_counter() - began

    one_request()  # it made the client (in the worker): not counted
    gaps.start()
    cpu_from = time.thread_time()
    latencies = [one_request() for _ in range(requests)]
    cpu_s, worst = time.thread_time() - cpu_from, gaps.stop()
    runner.shutdown()
    return summary(f"job ({kind})", latencies, cpu_s, worst)


def by_asyncio(app: QApplication, url: str, kind: str, requests: int, gaps: Gaps) -> dict[str, Any]:
    import ollama
    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    began, cpu_from = time.perf_counter(), time.thread_time()
    client = ollama.AsyncClient(host=url, timeout=10)
    made_ms = (time.perf_counter() - began) * 1000
    made_cpu_ms = (time.thread_time() - cpu_from) * 1000

    def ask() -> Awaitable[object]:
        return client.list() if kind == "status" else client.embed(model=MODEL, input=[TEXT])

    async def run() -> dict[str, Any]:
        await ask()  # as the jobs: the first request is not counted
        latencies = []
        gaps.start()
        cpu_from = time.thread_time()
        for _ in range(requests):
            began = time.perf_counter()
            await ask()
            latencies.append(time.perf_counter() - began)
        cpu_s, worst = time.thread_time() - cpu_from, gaps.stop()
        return summary(f"asyncio on qasync ({kind})", latencies, cpu_s, worst)

    with loop:
        result = loop.run_until_complete(run())
    result["client_made_on_gui_thread_ms"] = round(made_ms, 1)
    result["client_made_gui_cpu_ms"] = round(made_cpu_ms, 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    try:
        import qasync  # noqa: F401 - only to know whether the asyncio side can be measured
    except ImportError:
        with_asyncio = False
    else:
        with_asyncio = True
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = (server.stdout.readline() if server.stdout else "").strip()
        app = QApplication.instance() or QApplication([])
        assert isinstance(app, QApplication)
        gaps = Gaps()
        load_before = os.getloadavg()
        runs: list[dict[str, Any]] = []
        sides: list[Callable[[str], dict[str, Any]]] = [
            lambda kind: by_jobs(url, kind, args.requests, gaps)
        ]
        if with_asyncio:
            sides.append(lambda kind: by_asyncio(app, url, kind, args.requests, gaps))
        for _ in range(args.rounds):
            for kind in ("status", "embed"):
                runs.extend(side(kind) for side in sides)
    finally:
        server.kill()
        server.wait()
    emit(
        "bench_ollama_calls",
        {
            "load_average_before": load_before,
            "asyncio_measured": with_asyncio,
            "runs": runs,
        },
    )


if __name__ == "__main__":
    main()
