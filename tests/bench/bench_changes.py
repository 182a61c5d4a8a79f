"""What returning the changes costs an add and an update: the record built, against the same
calls with the record left out (`WriteBatch.changes` answering a constant), in one run.

    .venv/bin/python -m tests.bench.bench_changes [--ops 2000] [--rounds 5] [--dir /dev/shm]

Rounds alternate between the two, each on the same brain; CPU time per call is reported
(the machine is shared: wall time moves with the load, CPU time much less), the median and
the best round of each, and the record's own cost measured alone (`changes_from` of one
event, and of a 1,000-row batch).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.changes import TRACE, Changes, changes_from
from memgui.core.storage.transaction import WriteBatch
from tests.bench.common import emit

CONSTANT = Changes(kind="edit")


@contextmanager
def record_left_out() -> Iterator[None]:
    built = WriteBatch.changes
    WriteBatch.changes = lambda self, since=0: CONSTANT  # type: ignore[method-assign]
    try:
        yield
    finally:
        WriteBatch.changes = built  # type: ignore[method-assign]


def cpu_per_call(brain: Brain, ops: int) -> tuple[float, float]:
    start = time.process_time()
    for i in range(ops):
        brain.add(f"note {i} about the harbour tides", tags=["bench"])
    adds = (time.process_time() - start) / ops
    trace = brain.add("edited over and over")
    start = time.process_time()
    for i in range(ops):
        trace = brain.update(trace.id, {"tags": [str(i)]}, expect_version=trace.version)
    return adds, (time.process_time() - start) / ops


def best_us(call: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=5)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=None, help="folder of the brain (default: temp dir)")
    args = parser.parse_args()
    runs: dict[str, dict[str, list[float]]] = {
        "with_changes": {"add": [], "update": []},
        "without": {"add": [], "update": []},
    }
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp, Brain.open(Path(tmp) / "b.sqlite") as b:
        cpu_per_call(b, 200)  # warm: the first write, prepared statements
        for _ in range(args.rounds):
            for name in ("with_changes", "without"):
                if name == "without":
                    with record_left_out():
                        add, update = cpu_per_call(b, args.ops)
                else:
                    add, update = cpu_per_call(b, args.ops)
                runs[name]["add"].append(add)
                runs[name]["update"].append(update)
    one = [(TRACE, "mt_x", False, True)]
    many = [(TRACE, f"mt_{i}", False, True) for i in range(1000)]
    alone = {
        "one_event_us": best_us(lambda: changes_from(one, "edit", "b", "a"), 20_000),
        "thousand_events_us": best_us(lambda: changes_from(many, "import", "b", "a"), 50),
    }
    emit(
        "changes",
        {
            "ops_per_round": args.ops,
            "rounds": args.rounds,
            "cpu_us": {
                name: {
                    call: {
                        "median": round(statistics.median(values) * 1e6, 1),
                        "best": round(min(values) * 1e6, 1),
                    }
                    for call, values in calls.items()
                }
                for name, calls in runs.items()
            },
            "record_alone_us": {k: round(v, 2) for k, v in alone.items()},
        },
    )


if __name__ == "__main__":
    main()
