"""Planning a consolidation of a 20k-trace brain without embeddings (target: ≤ 10 s).

    .venv/bin/python -m tests.bench.bench_consolidate [--traces 20000] [--rounds 3]

The brain holds traces of every age (about a third weak enough to prune), exact copies (merge
clusters of 2–4), old episodic traces retrieved often (compact), agents' feedback on co-used
traces (strengthen) and chains of linked traces (clusters for derive, skipped: no chat model
is given). Each round times `plan_consolidation` alone, then the floor beside it: reading
every live trace and computing its current strength, which every plan must do. The plan
writes nothing, so the rounds see one brain. Prints JSON with the machine and its load.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from memgui.core import decay
from memgui.core.brain import Brain
from memgui.core.consolidate import ConsolidationOptions, plan_consolidation
from memgui.core.consolidate_steps import live_traces
from memgui.core.model import DAY_MS
from memgui.core.progress import run_to_end
from tests.bench.common import emit

TARGET_S = 10.0
WORDS = (
    "deploy build parser cache tea coffee release staging budget schema index query user "
    "agent memory review backup vault import export merge prune invoice client meeting"
).split()


def fill(brain: Brain, traces: int, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    now = int(time.time() * 1000)
    made: list[str] = []
    copies = 0
    with brain.batch(actor="bench"):
        for n in range(traces):
            days = rng.choice((0, 0, 0, 1, 2, 5, 9, 30))
            brain.clock = lambda d=days: now - d * DAY_MS
            if made and rng.random() < 0.06:  # an exact copy of an earlier trace
                text = brain.get(rng.choice(made[-200:])).content
                copies += 1
            else:
                text = f"{' '.join(rng.sample(WORDS, 5))} number {n}"
            made.append(brain.add(text, type=rng.choice(("episodic", "semantic"))).id)
        brain.clock = lambda: now
    with brain.db.lock:
        conn = brain.db.conn
        for trace_id in rng.sample(made, traces // 20):
            conn.execute(
                "UPDATE memory_traces SET retrieval_count = ?, last_accessed = ? WHERE id = ?",
                (rng.randint(0, 6), now - DAY_MS // 4, trace_id),
            )
        for q in range(200):
            for trace_id in rng.sample(made, 4):
                conn.execute(
                    "INSERT INTO retrieval_feedback (brain_id, trace_id, signal, query, "
                    "created_at) VALUES (?, ?, 'used', ?, ?)",
                    (brain.brain_id, trace_id, f"query {q}", now),
                )
    for start in range(0, 600, 6):  # 100 chains of 6 linked traces
        chain = made[start : start + 6]
        for a, b in zip(chain, chain[1:], strict=False):
            brain.link(a, b, "relates_to")
    return {"traces": traces, "copies": copies}


def floor(brain: Brain) -> float:
    start = time.perf_counter()
    now = brain.now()
    for _rowid, s in live_traces(brain).values():
        decay.current_strength(
            s["strength"], s["created_at"], s["last_accessed"], s["metadata"], s["category"], now
        )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memgui-bench-") as folder:
        path = Path(folder) / "brain.sqlite"
        with Brain.open(path, actor="bench") as brain:
            start = time.perf_counter()
            made = fill(brain, args.traces)
            fill_s = time.perf_counter() - start
            plans, floors = [], []
            counts: dict[str, int] = {}
            for _ in range(args.rounds):
                start = time.perf_counter()
                plan = run_to_end(plan_consolidation(brain, ConsolidationOptions()))
                plans.append(time.perf_counter() - start)
                counts = plan.counts
                floors.append(floor(brain))
    best = min(plans)
    median = sorted(plans)[len(plans) // 2]
    floor_median = sorted(floors)[len(floors) // 2]
    emit(
        "consolidate_plan",
        {
            "brain": {**made, "fill_s": round(fill_s, 2)},
            "plan_counts": counts,
            "plan_s": [round(s, 3) for s in plans],
            "plan_best_s": round(best, 3),
            "plan_median_s": round(median, 3),
            "floor_read_and_decay_s": round(min(floors), 3),
            "floor_median_s": round(floor_median, 3),
            # Medians: under load one round of either can be the lucky one.
            "plan_over_floor": round(median / floor_median, 2),
            "target_s": TARGET_S,
            "within_target": best <= TARGET_S,
        },
    )


if __name__ == "__main__":
    main()
