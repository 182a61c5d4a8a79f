"""The cognitive mode: AgentOS's composite score, its parts exact for every result."""

from __future__ import annotations

import json
import math
import re

import pytest

from memgui.core.errors import InvalidArgument
from memgui.core.progress import run_to_end
from memgui.core.search.cognitive import WEIGHTS, why
from memgui.core.search.embed import OllamaEmbedder
from tests.support.consolidation import NOW, add_aged, at


def set_row(brain, trace_id, **columns):
    """What another program (AgentOS) writes into a trace's JSON columns."""
    with brain.db.lock:
        for name, value in columns.items():
            brain.db.conn.execute(
                f"UPDATE memory_traces SET {name} = ? WHERE id = ?", (json.dumps(value), trace_id)
            )


def expected(parts):
    return max(0.0, min(1.0, sum(WEIGHTS[k] * parts[k] for k in WEIGHTS)))


def test_each_part_is_agentos_s_and_the_score_their_weighted_sum(brain):
    at(brain, NOW)
    old = add_aged(brain, "tea tea with lemon", 2, metadata={"confidence": 0.5})
    fresh = brain.add("tea at noon").id
    set_row(brain, old, emotions={"valence": 0.8})
    result = brain.search("tea", mode="cognitive", mood=0.5, record_recall=False)
    assert result.search_mode == "cognitive"
    hits = {h.trace.id: h for h in result.hits}
    aged = hits[old].parts
    assert aged["similaritySource"] == "keyword"
    assert aged["strength"] == pytest.approx(math.exp(-2))  # two days, stability one day
    assert aged["recency"] == pytest.approx(math.exp(-2))
    assert aged["emotionalCongruence"] == pytest.approx(0.4)  # 0.5 · 0.8
    assert aged["importance"] == pytest.approx(0.75)  # 0.5 + 0.5 · 0.5
    assert aged["graphActivation"] == 0.0
    new = hits[fresh].parts
    assert (new["strength"], new["recency"], new["emotionalCongruence"]) == (1.0, 1.0, 0.0)
    assert new["importance"] == 1.0
    assert max(aged["similarity"], new["similarity"]) == 1.0  # bm25 relative to the best
    for hit in result.hits:
        assert hit.score == pytest.approx(expected(hit.parts))
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    line = why(new, hits[fresh].score)
    assert re.fullmatch(
        r"\d\.\d\d = similarity \d\.\d\d×0\.35 \+ strength 1\.00×0\.25 \+ recency 1\.00×0\.1 "
        r"\+ mood 0\.00×0\.15 \+ graph 0\.00×0\.1 \+ importance 1\.00×0\.05",
        line,
    )


def test_the_mood_brings_congruent_memories_up(brain):
    at(brain, NOW)
    glad = brain.add("the trip to the lake").id
    sad = brain.add("the trip to the lake").id
    set_row(brain, glad, emotions={"valence": 0.9})
    set_row(brain, sad, emotions={"valence": -0.9})
    up = brain.search("trip lake", mode="cognitive", mood=1.0, record_recall=False)
    down = brain.search("trip lake", mode="cognitive", mood=-1.0, record_recall=False)
    neutral = brain.search("trip lake", mode="cognitive", record_recall=False)
    assert up.hits[0].trace.id == glad and down.hits[0].trace.id == sad
    assert up.hits[0].parts["emotionalCongruence"] == pytest.approx(0.9)
    assert all(h.parts["emotionalCongruence"] == 0.0 for h in neutral.hits)


def test_activation_spreads_from_the_nodes_the_query_names(brain):
    at(brain, NOW)
    a, b, c, d = (brain.add(f"note {n} about plans").id for n in "abcd")
    named = brain.add("plans", metadata={"entities": ["Bob"]}).id
    node = brain.add_node("Alice", "person").id
    with brain.db.lock:  # AgentOS's node of a trace, and its edge to the entity it mentions
        brain.db.conn.execute(
            "INSERT INTO knowledge_nodes (brain_id, id, type, label, created_at) "
            "VALUES (?, ?, 'memory_graph', ?, ?)",
            (brain.brain_id, a, a, NOW),
        )
        brain.db.conn.execute(
            "INSERT INTO knowledge_edges (brain_id, id, source_id, target_id, type, weight, "
            "created_at) VALUES (?, 'e1', ?, ?, 'mentions', 1.0, ?)",
            (brain.brain_id, a, node, NOW),
        )
    brain.link(a, b, "relates_to")
    brain.link(b, c, "relates_to")
    brain.link(c, d, "relates_to")
    result = brain.search("plans OR Alice OR Bob", mode="cognitive", limit=10, record_recall=False)
    graph = {h.trace.id: h.parts["graphActivation"] for h in result.hits}
    # Alice → a: 0.5, and back from b (0.25·0.5) as AgentOS sums paths; b 0.25, c 0.125;
    # d's 0.0625 is below the threshold; Bob is an entity `named` names itself: 1.
    assert graph == {a: 0.625, b: 0.25, c: 0.125, d: 0.0, named: 1.0}


def test_with_vectors_the_similarity_is_the_cosine(brain, ollama_server):
    at(brain, NOW)
    brain.use_embedder(OllamaEmbedder(ollama_server.url))
    car = brain.add("The automobile failed").id
    brain.add("Coffee at dawn")
    run_to_end(brain.semantic.backfill(brain))
    result = brain.search("car broke", mode="cognitive", record_recall=False)
    top = result.hits[0]
    assert top.trace.id == car and top.parts["similaritySource"] == "vector"
    assert top.parts["similarity"] == pytest.approx(1.0)
    ollama_server.stop()  # Ollama down: the keyword leg gives the similarity
    fallback = brain.search("automobile", mode="cognitive", record_recall=False)
    assert fallback.hits[0].parts["similaritySource"] == "keyword"


def test_only_returned_traces_are_recalled(brain):
    at(brain, NOW)
    ids = [brain.add(f"alpha {n}").id for n in range(3)]
    result = brain.search("alpha", mode="cognitive", limit=1)
    [hit] = result.hits
    counts = {i: brain.get(i).retrieval_count for i in ids}
    assert counts == {i: (1 if i == hit.trace.id else 0) for i in ids}


def test_bad_input_is_refused_naming_the_field(brain):
    for mood, message in ((2, "mood must be between -1 and 1 (got 2)"),
                          ("happy", "mood must be a number from -1 to 1")):  # fmt: skip
        with pytest.raises(InvalidArgument, match=re.escape(message)):
            brain.search("x", mode="cognitive", mood=mood)
    with pytest.raises(InvalidArgument, match="mood is for the cognitive mode only"):
        brain.search("x", mode="keyword", mood=0.5)
    with pytest.raises(InvalidArgument, match="limit must be between 1 and 200"):
        brain.search("x", mode="cognitive", limit=0)
    with pytest.raises(InvalidArgument, match="hybrid, cognitive"):
        brain.search("x", mode="dreamy")
    assert brain.search("  ?! ", mode="cognitive").hits == ()
