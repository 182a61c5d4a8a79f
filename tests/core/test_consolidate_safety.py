"""What no consolidation may ever do, checked over many runs on varied brains.

A canary set of distinct memories survives every run untouched; a second run right after a
first changes nothing; nothing is ever deleted for good; the number of memories drops by
exactly what the plan said it would. One run at a time per brain, across processes.
"""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from memgui.core.consolidate import ConsolidationOptions, apply, plan_consolidation, reflect
from memgui.core.consolidate_plan import STEPS
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from tests.support.consolidation import NOW, add_aged, add_feedback, at, set_retrievals

CANARIES = [
    "The production database is PostgreSQL 16",
    "Alice's birthday is on March 3rd",
    "Deploys need two approvals",
    "The office wifi password rotates monthly",
    "Bob is allergic to peanuts",
    "Our API rate limit is 600 requests a minute",
]
WORDS = "alpha beta gamma delta tea coffee car build deploy parser lunch park".split()


def noisy_brain(brain, seed: int) -> dict[str, tuple]:
    """Canaries (fresh, distinct) among duplicates, weak old traces, old often-used episodic
    ones and agents' feedback, drawn from `seed`. Returns the canaries as they were."""
    rng = random.Random(seed)
    at(brain, NOW)
    canaries = {}
    for text in CANARIES:
        t = brain.add(text, scope_id=rng.choice(["", "u1", "u2"]), tags=["canary"])
        canaries[t.id] = (t.content, t.tags, t.scope_id, t.type)
    made = []
    for _ in range(rng.randint(10, 30)):
        text = " ".join(rng.sample(WORDS, 2))
        made.append(
            add_aged(brain, text, rng.choice([0, 0, 1, 2, 5, 9]), scope_id=rng.choice(["", "u1"]))
        )
    for trace_id in rng.sample(made, k=len(made) // 3):
        set_retrievals(brain, trace_id, rng.randint(0, 5))
    add_feedback(brain, "words", rng.sample(made, k=3) + [next(iter(canaries))])
    return canaries


def live(brain) -> dict[str, tuple]:
    return {t.id: (t.content, t.tags, t.scope_id, t.type) for t in brain.list_traces(TraceFilter())}


def every_row(brain) -> int:
    return brain.count(TraceFilter(include_deleted=True))


@pytest.mark.parametrize("seed", range(6))
def test_no_run_harms_a_canary_deletes_for_good_or_miscounts(brain, seed):
    canaries = noisy_brain(brain, seed)
    rng = random.Random(seed)
    rows = every_row(brain)
    changed = 0
    for _ in range(3):
        steps = tuple(s for s in STEPS if rng.random() < 0.7) or ("prune",)
        p = run_to_end(plan_consolidation(brain, ConsolidationOptions(steps=steps)))
        for c in p.candidates():
            c.accepted = rng.random() < 0.8
        expected = p.accepted_counts()
        count = brain.count()
        result = run_to_end(apply(brain, p))
        assert brain.count() == count - expected["prune"] - expected["merge"] + expected["derive"]
        assert (result.pruned, result.merged) == (expected["prune"], expected["merge"])
        assert every_row(brain) == rows  # soft deletes only: every row is still there
        if result.batch_id:
            ops = {e.op for e in brain.batch_entries(result.batch_id)}
            assert ops <= {"forget", "merge", "update", "add", "link", "node", "edge"}
        now = live(brain)
        assert {i: now.get(i) for i in canaries} == canaries
        changed += result.pruned + result.merged + result.compacted + result.strengthened
    assert changed > 0


@pytest.mark.parametrize("seed", range(3))
def test_a_second_run_changes_nothing(brain, seed):
    noisy_brain(brain, seed)
    first = reflect(brain)
    assert first.pruned + first.merged > 0
    traces = live(brain)
    journal_end = brain.last_journal_id()
    edges = brain.edges()
    second = reflect(brain)
    assert (second.pruned, second.merged, second.strengthened, second.compacted) == (0, 0, 0, 0)
    assert second.batch_id is None and brain.last_journal_id() == journal_end
    assert live(brain) == traces and brain.edges() == edges


def test_old_often_used_traces_are_compacted_then_left_alone(brain):
    at(brain, NOW)
    trace_id = add_aged(brain, "We met at the conference", 30)
    set_retrievals(brain, trace_id, 4)
    options = ConsolidationOptions(steps=("compact",))
    assert reflect(brain, options).compacted == 1
    assert reflect(brain, options).compacted == 0


HOLDER = """
import sys
from pathlib import Path
from memgui.core.consolidate_lock import ConsolidationLock
lock = ConsolidationLock(Path(sys.argv[1]))
assert lock.acquire() is None
print("held", flush=True)
sys.stdin.read()
"""


def test_one_consolidation_at_a_time_across_processes(brain):
    noisy_brain(brain, 1)
    p = run_to_end(plan_consolidation(brain))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(brain.path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        busy = run_to_end(plan_consolidation(brain))
        assert busy.busy == f"another consolidation of this brain is running (process {holder.pid})"
        assert busy.counts == dict.fromkeys(STEPS, 0)
        count = brain.count()
        for result in (run_to_end(apply(brain, p)), reflect(brain)):
            assert result.seed_counts() == {
                "pruned": 0, "merged": 0, "derived": 0, "compacted": 0,
                "durationMs": 0, "personalityDecayed": 0,
            }  # fmt: skip
            assert result.busy and result.batch_id is None
        assert brain.count() == count
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert run_to_end(plan_consolidation(brain)).busy is None  # released when it ended
    assert run_to_end(apply(brain, p)).pruned == len(p.prune)
