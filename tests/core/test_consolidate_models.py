"""Consolidation with Ollama: merging by stored vectors, deriving insights with a chat model.

The real `ollama` client talks to the test server (tests/support/ollama_server.py), whose
vectors put synonyms together and whose chat model answers deterministically.
"""

from __future__ import annotations

import pytest

from memgui.core.consolidate import ConsolidationOptions, apply, plan_consolidation
from memgui.core.llm import OllamaChat
from memgui.core.progress import run_to_end
from memgui.core.search.embed import OllamaEmbedder
from tests.support.consolidation import NOW, at, linked_cluster


def plan(brain, **options):
    return run_to_end(plan_consolidation(brain, ConsolidationOptions(**options)))


@pytest.fixture
def embedded(brain, ollama_server):
    """Paraphrases the test server embeds alike, and one memory that means something else."""
    at(brain, NOW)
    brain.use_embedder(OllamaEmbedder(ollama_server.url))
    ids = [
        brain.add("The car broke").id,
        brain.add("The automobile failed").id,
        brain.add("Vehicle breakdown").id,
        brain.add("Coffee at dawn").id,
        brain.add("The car broke", scope_id="someone-else").id,
    ]
    run_to_end(brain.semantic.backfill(brain))
    return brain, ids


def test_traces_of_one_meaning_merge_on_their_stored_vectors(embedded, ollama_server):
    brain, ids = embedded
    calls = ollama_server.embed_count()
    p = plan(brain, steps=("merge",))
    assert ollama_server.embed_count() == calls  # planning compares the stored vectors
    [cluster] = p.merge
    assert [m.trace_id for m in cluster.members] == ids[:3]
    assert cluster.basis == "similar"
    assert cluster.why.startswith("3 traces with cosine similarity > 0.95 (lowest link 1.0000")
    assert all(m.similarity == pytest.approx(1.0) for m in cluster.members)
    assert "cosine similarity 1.0000 to" in cluster.members[1].evidence
    result = run_to_end(apply(brain, p))
    assert result.merged == 2 and brain.count() == 3


def test_a_higher_threshold_keeps_near_matches_apart(embedded):
    brain, _ids = embedded
    brain.add("The car broke down")  # near, not the same bag of meanings
    run_to_end(brain.semantic.backfill(brain))
    [cluster] = plan(brain, steps=("merge",)).merge
    assert len(cluster.members) == 3  # 'broke down' (0.82) is not above 0.95


@pytest.fixture
def chat(ollama_server):
    llm = OllamaChat(ollama_server.url)
    yield llm
    llm.close()


def test_a_cluster_of_linked_traces_gets_one_derived_insight(brain, chat, ollama_server):
    at(brain, NOW)
    members = linked_cluster(
        brain,
        [f"Python build step {n} compiles the parser" for n in range(5)],
        scope_id="team",
    )
    brain.add("Unrelated memory about lunch")
    p = plan(brain, steps=("derive",), llm=chat)
    [candidate] = p.derive
    assert candidate.member_ids == members and candidate.model == "llama3.2"
    assert candidate.insight == "Insight: these memories are about build, compiles, parser"
    sent = ollama_server.chat_requests[-1]["messages"][-1]["content"]
    assert sent.startswith("Given these related memories, derive one concise higher-level insight:")
    assert ollama_server.chat_requests[-1]["options"] == {"temperature": 0}
    candidate.set_insight("The parser is compiled in every build step")
    result = run_to_end(apply(brain, p))
    [insight] = [brain.get(i) for i in result.derived_ids]
    assert insight.id.startswith("insight_") and insight.content.startswith("The parser")
    assert (insight.type, insight.scope, insight.scope_id) == ("semantic", "user", "team")
    assert insight.tags == ("derived", "insight") and insight.stored_strength == 0.7
    assert insight.metadata["derivedFrom"] == sorted(members)
    calls = len(ollama_server.chat_requests)
    again = plan(brain, steps=("derive",), llm=chat)
    assert again.derive == [] and len(ollama_server.chat_requests) == calls
    assert any(
        "no cluster of 5 or more linked memories without an insight" in n for n in again.notes
    )


def test_derive_is_skipped_and_said_so_when_no_chat_model_answers(brain, chat, ollama_server):
    at(brain, NOW)
    linked_cluster(brain, [f"note {n}" for n in range(6)])
    ollama_server.stop()
    p = plan(brain, steps=("derive",), llm=chat)
    assert p.derive == []
    assert p.notes == [
        f"derive skipped: 1 cluster(s) found, but Ollama at {chat.url} is not reachable"
    ]
    ollama_server.start()
    ollama_server.chat_models.clear()
    [note] = plan(brain, steps=("derive",), llm=chat).notes
    assert note.endswith("has no model 'llama3.2' (ollama pull llama3.2)")
    assert plan(brain, steps=("derive",)).notes == [
        "derive skipped: 1 cluster(s) found, but no chat model was given"
    ]


def test_a_failed_chat_call_skips_its_cluster_only(brain, chat, ollama_server):
    at(brain, NOW)
    linked_cluster(brain, [f"first cluster {n}" for n in range(6)])
    linked_cluster(brain, [f"second cluster {n}" for n in range(5)])
    ollama_server.fail_next_chat = 1
    p = plan(brain, steps=("derive",), llm=chat)
    assert [len(c.member_ids) for c in p.derive] == [5]
    assert any(n.startswith("derive: cluster of") and "HTTP 500" in n for n in p.notes)
