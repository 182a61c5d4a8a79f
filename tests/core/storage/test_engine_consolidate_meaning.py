"""Merging by meaning on both engines: the same brain with embedded near-duplicates gives the
same clusters, similarities and survivors on a SQLite file and on a real PostgreSQL server
(`consolidate_steps.merge`, one rule for both), compared on the vectors the plan read; the
run merges them in one batch a revert undoes to the last row."""

from __future__ import annotations

from typing import Any

import pytest

from memgui.core import consolidate
from memgui.core.brain import Brain
from memgui.core.consolidate import ConsolidationOptions
from memgui.core.errors import ConsolidationOutdated
from memgui.core.model import TraceFilter, now_ms
from memgui.core.progress import run_to_end
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.semantic import SemanticSearch
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import BrainStore
from tests.support.ollama_server import FakeOllama

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server

MERGE = ConsolidationOptions(steps=("merge",))


def embed_all(store: BrainStore, server: FakeOllama) -> None:
    embedder = OllamaEmbedder(server.url, model="nomic-embed-text")
    store.use_embedder(embedder)
    if isinstance(store, Brain):
        run_to_end(SemanticSearch(embedder).backfill(store))
    else:
        assert isinstance(store, SharedBrain)
        run_to_end(store.backfill())


def state(store: BrainStore) -> dict[str, tuple[Any, ...]]:
    found = store.list_traces(TraceFilter(include_deleted=True), limit=200)
    return {
        t.id: (t.content, t.tags, t.deleted, t.type, [r.id for r in store.related(t.id)])
        for t in found
    }


def fill(store: BrainStore, server: FakeOllama) -> list[str]:
    """Paraphrases the test server embeds alike, a copy elsewhere, and one unrelated."""
    start = now_ms()  # a millisecond apart at least: PostgreSQL reads ties by id
    store.clock = iter(range(start, start + 10**9, 10)).__next__  # type: ignore[attr-defined]
    ids = [
        store.add("The car broke", tags=["ops"]).id,
        store.add("The automobile failed", tags=["release"]).id,
        store.add("Vehicle breakdown").id,
        store.add("Coffee at dawn").id,
        store.add("The car broke", scope_id="someone-else").id,  # another scope: kept apart
        store.add("The car broke down").id,  # near (0.82), not above 0.95
    ]
    store.link(ids[2], ids[3], "relates_to")
    embed_all(store, server)
    store.search("automobile", mode="keyword", limit=5)  # recalled once: the survivor
    return ids


def test_near_duplicates_cluster_alike_and_a_revert_undoes_the_merge(
    store: BrainStore, ollama_server: FakeOllama
) -> None:
    ids = fill(store, ollama_server)
    before = state(store)
    calls = ollama_server.embed_count()

    plan = run_to_end(consolidate.plan_consolidation(store, MERGE))

    assert ollama_server.embed_count() == calls  # the stored vectors, not the embedder
    assert not [n for n in plan.notes if n.startswith("merge")]
    [cluster] = plan.merge
    assert [m.trace_id for m in cluster.members] == ids[:3]
    assert (cluster.basis, cluster.survivor_id) == ("similar", ids[1])
    assert cluster.content == "The automobile failed"
    assert cluster.why.startswith("3 traces with cosine similarity > 0.95 (lowest link 1.0000")
    assert all(m.similarity == pytest.approx(1.0) for m in cluster.members)
    assert "cosine similarity 1.0000 to" in cluster.members[1].evidence
    assert state(store) == before  # planning wrote nothing

    applied = run_to_end(consolidate.apply(store, plan))

    assert (applied.merged, applied.busy) == (2, None)
    after = state(store)
    assert after[ids[0]][2] and after[ids[2]][2] and not after[ids[1]][2]
    assert set(after[ids[1]][1]) == {"ops", "release"}
    assert after[ids[1]][4] == [ids[3]]  # the link moved to the survivor
    assert run_to_end(consolidate.plan_consolidation(store, MERGE)).merge == []
    assert applied.batch_id is not None
    store.revert(applied.batch_id)
    assert state(store) == before


def test_a_member_changed_since_the_plan_makes_it_outdated(
    store: BrainStore, ollama_server: FakeOllama
) -> None:
    ids = fill(store, ollama_server)
    plan = run_to_end(consolidate.plan_consolidation(store, MERGE))
    assert [m.trace_id for m in plan.merge[0].members] == ids[:3]
    store.update(ids[2], {"content": "Vehicle breakdown on the motorway"})  # its vector goes stale
    before = state(store)
    with pytest.raises(ConsolidationOutdated, match=ids[2]):
        run_to_end(consolidate.apply(store, plan))
    assert state(store) == before


def test_a_lower_threshold_joins_the_near_one_alike(
    store: BrainStore, ollama_server: FakeOllama
) -> None:
    ids = fill(store, ollama_server)
    options = ConsolidationOptions(steps=("merge",), merge_threshold=0.8)
    [cluster] = run_to_end(consolidate.plan_consolidation(store, options)).merge
    assert [m.trace_id for m in cluster.members] == [*ids[:3], ids[5]]
    low = min(m.similarity for m in cluster.members if m.similarity is not None)
    assert 0.8 < low < 0.95
