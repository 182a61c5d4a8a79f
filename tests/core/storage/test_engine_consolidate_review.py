"""The consolidation window's calls (`consolidate.plan_consolidation`, `consolidate.apply`) on
both engines: a plan reviewed (some candidates turned down) applies only what was accepted,
in one batch a revert undoes; a plan the brain overtook, or a cancelled run, writes nothing.
On a shared brain the plan and the run hold the brain id's advisory lock as AgentOS does: a
run while another holds it writes nothing and says who holds it."""

from __future__ import annotations

import psycopg
import pytest

from memgui.core import consolidate
from memgui.core.consolidate import ConsolidationOptions
from memgui.core.errors import ConsolidationOutdated
from memgui.core.model import TraceFilter
from memgui.core.progress import Cancelled, Progress, run_to_end
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import BrainStore, parse_postgres_address

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server

STEPS = ConsolidationOptions(steps=("prune", "merge", "compact"))


def state(store: BrainStore) -> dict[str, tuple[str, tuple[str, ...], bool, str]]:
    found = store.list_traces(TraceFilter(include_deleted=True), limit=200)
    return {t.id: (t.content, t.tags, t.deleted, t.type) for t in found}


def fill(store: BrainStore) -> dict[str, str]:
    return {
        "weak": store.add("a faint memory", strength=0.01).id,
        "weaker": store.add("another faint one", strength=0.01).id,
        "first": store.add("We deploy on Fridays", tags=["ops"]).id,
        "copy": store.add("We deploy on Fridays", tags=["release"]).id,
    }


def test_a_reviewed_plan_applies_what_was_accepted_and_reverts(store: BrainStore) -> None:
    ids = fill(store)
    before = state(store)
    steps: list[Progress] = []

    plan = run_to_end(consolidate.plan_consolidation(store, STEPS), steps.append)  # type: ignore[arg-type]

    assert {c.trace_id for c in plan.prune} == {ids["weak"], ids["weaker"]}
    assert len(plan.merge) == 1 and steps and state(store) == before  # planning wrote nothing
    turned_down = next(c for c in plan.prune if c.trace_id == ids["weaker"])
    turned_down.accepted = False
    applied = run_to_end(consolidate.apply(store, plan), steps.append)  # type: ignore[arg-type]

    assert (applied.pruned, applied.merged, applied.busy) == (1, 1, None)
    after = state(store)
    assert after[ids["weak"]][2] and not after[ids["weaker"]][2]
    assert after[ids["copy"]][2] and after[ids["first"]][1] == ("ops", "release")
    assert steps[-1].done == steps[-1].total == 2
    assert applied.changes is not None and applied.batch_id == applied.changes.batch_id
    store.revert(applied.batch_id)  # type: ignore[arg-type]
    assert state(store) == before


def test_an_overtaken_plan_or_a_cancelled_run_writes_nothing(store: BrainStore) -> None:
    ids = fill(store)
    plan = run_to_end(consolidate.plan_consolidation(store, STEPS))  # type: ignore[arg-type]
    with pytest.raises(Cancelled):
        run_to_end(consolidate.apply(store, plan, cancel_requested=lambda: True))  # type: ignore[arg-type]
    before = state(store)
    store.update(ids["weak"], {"content": "a faint memory, edited"})
    edited = state(store)
    with pytest.raises(ConsolidationOutdated) as outdated:
        run_to_end(consolidate.apply(store, plan))  # type: ignore[arg-type]
    assert ids["weak"] in str(outdated.value) and "edited" in str(outdated.value)
    assert state(store) == edited != before
    again = run_to_end(consolidate.plan_consolidation(store, STEPS))  # type: ignore[arg-type]
    assert run_to_end(consolidate.apply(store, again)).pruned == 2  # type: ignore[arg-type]


def test_a_shared_run_holds_the_brains_lock_as_agentos_does(pg_address: str) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        ids = fill(brain)  # type: ignore[arg-type]
        before = state(brain)  # type: ignore[arg-type]
        plan = run_to_end(consolidate.plan_consolidation(brain, STEPS))  # type: ignore[arg-type]
        address = parse_postgres_address(pg_address)
        with psycopg.connect(address.conninfo, autocommit=True) as other:
            other.execute("SET application_name = 'agentos reflect'")
            with other.transaction():
                other.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",))
                busy = run_to_end(consolidate.apply(brain, plan))  # type: ignore[arg-type]
                busy_plan = run_to_end(consolidate.plan_consolidation(brain, STEPS))  # type: ignore[arg-type]
        assert busy.busy is not None and "'agentos reflect'" in busy.busy
        assert (busy.pruned, busy.merged, busy.batch_id) == (0, 0, None)
        assert busy_plan.busy is not None and not busy_plan.candidates()
        assert state(brain) == before  # type: ignore[arg-type]
        # While the run holds the lock, AgentOS's reflect (the same key) is refused.
        seen: list[bool] = []

        def probe() -> bool:
            with psycopg.connect(address.conninfo, autocommit=True) as agentos:
                row = agentos.execute(
                    "SELECT pg_try_advisory_lock(hashtext(%s))", ("agentos_brain:team",)
                ).fetchone()
                seen.append(bool(row and row[0]))
            return False

        applied = run_to_end(consolidate.apply(brain, plan, cancel_requested=probe))  # type: ignore[arg-type]
        assert seen and not any(seen)
        assert applied.pruned == 2 and state(brain)[ids["weak"]][2]  # type: ignore[arg-type]
