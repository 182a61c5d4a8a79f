"""Consolidation (`memgui reflect`) on both engines: the same brain gives the same prunes and
merges on a SQLite file and on a real PostgreSQL server, one batch a revert undoes; on
PostgreSQL a second long operation finds the brain busy and writes nothing."""

from __future__ import annotations

import psycopg
import pytest

from memgui.core import consolidate, shared_consolidate
from memgui.core.brain import Brain
from memgui.core.consolidate_apply import ConsolidationResult
from memgui.core.model import TraceFilter, now_ms
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import BrainStore, parse_postgres_address

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def reflect(store: BrainStore) -> ConsolidationResult:
    if isinstance(store, SharedBrain):
        return shared_consolidate.reflect(store)
    assert isinstance(store, Brain)
    return consolidate.reflect(store)


def test_reflect_prunes_and_merges_alike_and_a_revert_undoes_it(store: BrainStore) -> None:
    # Adds a millisecond apart at least: two copies added in one millisecond are read oldest
    # first by id on PostgreSQL (no insertion order there), and the survivor would be either.
    start = now_ms()
    store.clock = iter(range(start, start + 10**9, 10)).__next__  # type: ignore[attr-defined]
    weak = store.add("a faint memory", strength=0.01)
    first = store.add("We deploy on Fridays", tags=["ops"])
    copy = store.add("We deploy on Fridays", tags=["release"])
    elsewhere = store.add("We deploy on Fridays", scope="thread", scope_id="t1")  # not merged
    other = store.add("the release checklist")
    store.link(copy.id, other.id, "relates_to")
    before = {t.id: (t.content, t.tags, t.deleted) for t in store.list_traces()}

    result = reflect(store)

    assert (result.pruned, result.merged, result.busy) == (1, 1, None)
    assert store.get(weak.id).deleted and store.get(copy.id).deleted
    survivor = store.get(first.id)
    assert survivor.tags == ("ops", "release") and not survivor.deleted
    assert [r.id for r in store.related(first.id)] == [other.id]  # the copy's link moved
    assert not store.get(elsewhere.id).deleted
    assert result.batch_id is not None
    assert reflect(store).merged == 0  # nothing left to merge

    store.revert(result.batch_id)
    after = {t.id: (t.content, t.tags, t.deleted) for t in store.list_traces()}
    assert after == before
    assert [r.id for r in store.related(copy.id)] == [other.id]


def test_a_shared_brain_held_by_another_long_operation_is_busy(pg_address: str) -> None:
    with SharedBrain.open(pg_address, actor="test") as brain:
        a = brain.add("same text")
        brain.add("same text")
        address = parse_postgres_address(pg_address)
        with psycopg.connect(address.conninfo, autocommit=True) as other:
            other.execute("SET application_name = 'agentos migration'")
            with other.transaction():
                other.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("agentos_brain:team",))
                busy = shared_consolidate.reflect(brain)
        assert busy.busy is not None and "'agentos migration'" in busy.busy
        assert (busy.merged, busy.pruned, busy.batch_id) == (0, 0, None)
        assert brain.count(TraceFilter(include_deleted=True)) == 2
        assert [e.op for e in brain.history(a.id)] == ["add"]
        plan = shared_consolidate.plan_consolidation(brain)
        assert len(plan.merge) == 1 and not any(n.startswith("merge") for n in plan.notes)
        assert any(n.startswith("derive:") for n in plan.notes)
        assert brain.get(a.id).version == 1  # planning wrote nothing
