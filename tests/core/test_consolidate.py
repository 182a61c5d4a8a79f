"""Consolidation: plan (writes nothing, says why) → review → apply (one batch, revertible)."""

from __future__ import annotations

import re

import pytest

from memgui.core.consolidate import (
    ConsolidationOptions,
    apply,
    plan_consolidation,
)
from memgui.core.errors import ConsolidationOutdated, InvalidArgument
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from tests.support.cli import snapshot
from tests.support.consolidation import NOW, add_aged, add_feedback, at, set_retrievals


@pytest.fixture
def aged(brain):
    """A brain at NOW: two weak traces, a fresh one, exact copies in one scope and another."""
    at(brain, NOW)
    ids = {
        "weak": add_aged(brain, "Forgotten lunch order", 10),
        "weak2": add_aged(brain, "An old parking spot", 4),
        "fresh": brain.add("The deploy runs on Fridays").id,
        "copy1": brain.add("Alice prefers tea", scope_id="alice", tags=["drinks"]).id,
        "copy2": brain.add("Alice prefers tea", scope_id="alice", tags=["alice"]).id,
        "other_scope": brain.add("Alice prefers tea", scope_id="bob").id,
        "other_type": brain.add("Alice prefers tea", scope_id="alice", type="semantic").id,
    }
    return brain, ids


def plan(brain, **options):
    return run_to_end(plan_consolidation(brain, ConsolidationOptions(**options)))


def test_a_plan_writes_nothing_and_says_why(aged):
    brain, ids = aged
    before = snapshot(brain.path)
    p = plan(brain)
    assert snapshot(brain.path) == before
    pruned = {c.trace_id: c for c in p.prune}
    assert set(pruned) == {ids["weak"], ids["weak2"]}
    weak = pruned[ids["weak"]]
    assert weak.strength < 0.05 and weak.threshold == 0.05
    assert weak.why.startswith(f"strength {weak.strength:.4f} < 0.05 (unused 10.0 days")
    # exact copies merge within one scope and type only
    [cluster] = p.merge
    assert [m.trace_id for m in cluster.members] == [ids["copy1"], ids["copy2"]]
    assert cluster.basis == "same text" and cluster.why == "2 traces with the same text (SHA-256)"
    assert cluster.members[1].evidence == f"same text as {ids['copy1']}"
    assert p.counts == {
        "prune": 2,
        "merge": 1,
        "strengthen": 0,
        "derive": 0,
        "compact": 0,
        "reindex": p.reindex_pending,
    }
    assert any(note.startswith("derive: no cluster of 5") for note in p.notes)


def test_merging_across_scopes_and_types_only_when_asked(aged):
    brain, ids = aged
    [cluster] = plan(brain, merge_across_scopes=True, merge_across_types=True).merge
    assert {m.trace_id for m in cluster.members} == {
        ids["copy1"],
        ids["copy2"],
        ids["other_scope"],
        ids["other_type"],
    }
    [cluster] = plan(brain, merge_across_scopes=True).merge
    assert {m.trace_id for m in cluster.members} == {ids["copy1"], ids["copy2"], ids["other_scope"]}


def test_apply_is_one_batch_of_soft_deletes_that_one_revert_undoes(aged):
    brain, ids = aged
    before = {t.id: t for t in brain.list_traces(TraceFilter(include_deleted=True))}
    p = plan(brain)
    result = run_to_end(apply(brain, p))
    assert (result.pruned, result.merged, result.derived, result.compacted) == (2, 1, 0, 0)
    entries = brain.batch_entries(result.batch_id)
    assert {e.actor for e in entries} == {"consolidation"}
    assert {e.op for e in entries} == {"forget", "merge"}
    # nothing is ever deleted for good: every row is still in the brain
    everything = {t.id: t for t in brain.list_traces(TraceFilter(include_deleted=True))}
    assert set(everything) == set(before)
    assert everything[ids["weak"]].deleted and everything[ids["copy2"]].deleted
    survivor = everything[ids["copy1"]]
    assert survivor.tags == ("drinks", "alice") and survivor.metadata["verificationCount"] == 1
    assert brain.count() == len(before) - 3
    brain.revert(result.batch_id)
    after = {t.id: t for t in brain.list_traces(TraceFilter(include_deleted=True))}
    assert {i: (t.deleted, t.content, t.tags) for i, t in after.items()} == {
        i: (t.deleted, t.content, t.tags) for i, t in before.items()
    }


def test_the_person_picks_the_survivor_edits_the_text_and_rejects_the_rest(aged):
    brain, ids = aged
    set_retrievals(brain, ids["copy1"], 5)
    p = plan(brain)
    [cluster] = p.merge
    assert cluster.survivor_id == ids["copy1"]  # the most retrieved, as AgentOS keeps it
    cluster.choose_survivor(ids["copy2"])
    cluster.set_content("Alice prefers green tea")
    for c in p.prune:
        c.accepted = c.trace_id == ids["weak"]
    result = run_to_end(apply(brain, p))
    assert (result.pruned, result.merged) == (1, 1)
    kept = brain.get(ids["copy2"])
    assert kept.content == "Alice prefers green tea" and kept.retrieval_count == 5
    assert brain.get(ids["copy1"]).deleted and not brain.get(ids["weak2"]).deleted


def test_accepted_keys_choose_the_candidates(aged):
    brain, ids = aged
    p = plan(brain)
    result = run_to_end(apply(brain, p, accepted=[f"prune:{ids['weak2']}"]))
    assert (result.pruned, result.merged) == (1, 0)
    assert brain.get(ids["weak2"]).deleted and not brain.get(ids["weak"]).deleted
    with pytest.raises(InvalidArgument, match="accepted names no candidate of this plan"):
        run_to_end(apply(brain, plan(brain), accepted=["prune:mt_nope"]))


def test_a_plan_applies_once(aged):
    brain, _ids = aged
    p = plan(brain)
    run_to_end(apply(brain, p))
    with pytest.raises(InvalidArgument, match="plan was applied already"):
        run_to_end(apply(brain, p))


@pytest.mark.parametrize("change", ["edit", "recall", "forget"])
def test_a_plan_the_brain_overtook_is_refused_and_writes_nothing(aged, change):
    brain, ids = aged
    p = plan(brain)
    if change == "edit":
        brain.update(ids["weak"], {"content": "Forgotten lunch order: soup"})
    elif change == "recall":
        brain.search("parking", limit=5)  # a recall makes the weak trace strong again
    else:
        brain.forget(ids["copy2"])
    before = snapshot(brain.path)
    with pytest.raises(ConsolidationOutdated, match="the brain changed since this consolidation"):
        run_to_end(apply(brain, p))
    assert snapshot(brain.path) == before


def test_compact_makes_old_often_used_episodic_traces_semantic(brain):
    at(brain, NOW)
    old = add_aged(brain, "We met at the conference", 8, tags=["kept"])
    young = add_aged(brain, "We met at the station", 2)
    set_retrievals(brain, old, 3)
    set_retrievals(brain, young, 9)
    p = plan(brain, steps=("compact",))
    assert [c.trace_id for c in p.compact] == [old]
    assert "episodic, 8.0 days old (> 7) and retrieved 3 times (>= 3)" in p.compact[0].why
    result = run_to_end(apply(brain, p))
    assert result.compacted == 1 and brain.get(old).type == "semantic"
    assert brain.get(young).type == "episodic"


def test_strengthen_grows_co_activation_edges_once_per_feedback(brain):
    at(brain, NOW)
    a, b, c = (brain.add(t).id for t in ("red", "green", "blue"))
    add_feedback(brain, "colours", [a, b, c])
    add_feedback(brain, "ignored", [a, b], signal="ignored")
    p = plan(brain, steps=("strengthen",))
    [candidate] = p.strengthen
    assert candidate.query == "colours" and len(candidate.pairs) == 3
    assert all(pair.weight_before is None and pair.weight_after == 0.1 for pair in candidate.pairs)
    result = run_to_end(apply(brain, p))
    assert result.strengthened == 1 and result.seed_counts()["derived"] == 1
    edges = {(e["source_id"], e["target_id"]): e for e in brain.edges()}
    assert {k: e["weight"] for k, e in edges.items()} == {
        tuple(sorted(pair)): 0.1 for pair in ((a, b), (a, c), (b, c))
    }
    assert {n["id"] for n in brain.nodes()} == {a, b, c}
    assert plan(brain, steps=("strengthen",)).strengthen == []  # counted already
    add_feedback(brain, "colours", [a, b])
    [again] = plan(brain, steps=("strengthen",)).strengthen
    run_to_end(apply(brain, plan(brain, steps=("strengthen",))))
    assert again.pairs[0].weight_before == 0.1
    weights = sorted(e["weight"] for e in brain.edges())
    assert weights == pytest.approx([0.1, 0.1, 0.2])  # only a and b were used again


def test_reindex_takes_in_what_waits_and_every_run_is_logged(aged):
    brain, _ids = aged
    p = plan(brain, steps=("reindex",))
    assert p.reindex_pending > 0
    result = run_to_end(apply(brain, p))
    assert result.reindexed == p.reindex_pending and result.batch_id is None
    with brain.db.lock:
        rows = brain.db.conn.execute(
            "SELECT pruned, merged, derived, compacted FROM consolidation_log WHERE brain_id = ?",
            (brain.brain_id,),
        ).fetchall()
    assert rows == [(0, 0, 0, 0)]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"steps": ("prune", "dream")}, "steps must name steps of prune, merge"),
        ({"steps": "prune"}, "steps must be a list of steps"),
        ({"prune_threshold": 0}, "prune_threshold must be a number greater than 0"),
        ({"merge_threshold": 1.5}, "merge_threshold must be a number greater than 0"),
        ({"merge_across_scopes": "yes"}, "merge_across_scopes must be True or False"),
        ({"min_cluster_size": 1}, "min_cluster_size must be between 2 and 10000 (got 1)"),
        ({"max_derived": 101}, "max_derived must be between 0 and 100 (got 101)"),
        ({"compact_age_days": -1}, "compact_age_days must be a number of days from 0 to 36500"),
    ],
)
def test_bad_options_are_refused_naming_the_field(brain, options, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        plan(brain, **options)
