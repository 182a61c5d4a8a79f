"""What asking for a word's other forms costs a search, and what the Title column costs a paint.

    .venv/bin/python -m tests.bench.bench_word_forms [--big 200000] [--brain PATH]

Builds a brain of `--big` traces as `bench_core` does (or opens `--brain`) and runs
bench_core's 200 two-word queries through `brain.search` (limit 20, warm, second of two
rounds) twice in the same run: as shipped (each English word asks for its forms) and with
the forms turned off (the peer: the words as typed). Then the cell texts of the Title and
Content columns of 20,000 traces, as the table's `data()` formats them per paint.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.search import word_forms
from tests.bench.bench_search_floor import built_brain, queries
from tests.bench.common import emit, percentiles


def searches(brain: Brain, rounds: int = 2) -> dict[str, float]:
    asked = [" ".join(words) for words in queries()]
    result: dict[str, float] = {}
    for _ in range(rounds):
        samples = []
        for query in asked:
            start = time.perf_counter()
            brain.search(query, limit=20, record_recall=False)
            samples.append(time.perf_counter() - start)
        result = percentiles(samples)
    return result


def cells(brain: Brain) -> dict[str, object]:
    from memgui.ui.models.trace_columns import COLUMNS, CONTENT_COLUMN, TITLE_COLUMN

    traces = brain.list_traces(limit=200) * 100  # 20,000 cells of real rows
    out: dict[str, object] = {}
    for name, column in (("content", CONTENT_COLUMN), ("title", TITLE_COLUMN)):
        display = COLUMNS[column].display
        start = time.perf_counter()
        for trace in traces:
            display(trace)
        out[f"{name}_us_per_cell"] = round((time.perf_counter() - start) / len(traces) * 1e6, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", type=int, default=200_000)
    parser.add_argument("--brain", type=Path, help="an existing brain to measure instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, results = built_brain(args.brain, args.big, tmp)
        with Brain.open(path) as brain:
            results["traces"] = brain.info()["traces"]
            results["search_with_forms"] = searches(brain)
            shipped = word_forms.forms
            word_forms.forms = lambda word: ()  # the peer: each word as typed
            try:
                results["search_words_as_typed"] = searches(brain)
            finally:
                word_forms.forms = shipped
            results["cells"] = cells(brain)
    emit("word_forms", results)


if __name__ == "__main__":
    main()
