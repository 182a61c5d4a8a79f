"""The embedding backfill's own cost per trace, with the test Ollama server (issue 6).

    .venv/bin/python -m tests.bench.bench_backfill [--traces 20000]

A brain of pending traces (real sentences) is embedded by `SemanticSearch.backfill`, 128
texts per `/api/embed` call to the test server over real HTTP (768-d vectors). The time spent
inside the embedder's calls (the request, the server's work, the response parsed by the
`ollama` client) is Ollama's; the rest — reading pending rows, checking each is unchanged,
writing the BLOB, the sqlite-vec row and the change log, committing each batch — is
memgui's overhead, reported per trace. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from memgui.core.brain import Brain
from memgui.core.progress import run_to_end
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.semantic import SemanticSearch
from tests.bench.bench_core import SENTENCES
from tests.bench.common import emit
from tests.support.ollama_server import FakeOllama


class TimedEmbedder:
    """The real embedder, with the wall time spent inside its calls added up."""

    def __init__(self, inner: OllamaEmbedder) -> None:
        self.inner = inner
        self.model = inner.model
        self.seconds = 0.0
        self.calls = 0

    def embed(self, texts: list[str]) -> Any:
        start = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=20_000)
    args = parser.parse_args()
    server = FakeOllama(models={"nomic-embed-text": 768}).start()
    rng = random.Random(11)
    try:
        with tempfile.TemporaryDirectory() as tmp, Brain.open(Path(tmp) / "b.sqlite") as brain:
            with brain.batch(actor="bench"):
                for _ in range(args.traces):
                    brain.add(f"{rng.choice(SENTENCES)} {rng.choice(SENTENCES)}")
            embedder = TimedEmbedder(OllamaEmbedder(server.url, model="nomic-embed-text"))
            start, cpu = time.perf_counter(), time.process_time()
            report = run_to_end(SemanticSearch(embedder).backfill(brain))
            total, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        server.stop()
    overhead = total - embedder.seconds
    emit(
        "backfill",
        {
            "traces": args.traces,
            "embedded": report.embedded,
            "ollama_calls": embedder.calls,
            "total_s": round(total, 3),
            "process_cpu_s": round(cpu, 3),
            "inside_embedder_s": round(embedder.seconds, 3),
            "memgui_overhead_s": round(overhead, 3),
            "memgui_overhead_us_per_trace": round(overhead / args.traces * 1e6, 1),
            "traces_per_s": round(args.traces / total),
        },
    )


if __name__ == "__main__":
    main()
