"""Similar memories and the cognitive search on both engines: the same calls give the same
neighbours, scores' parts, refusals and recalls on a SQLite file and on a real PostgreSQL
server (`BrainStore`), through the real ollama client and the tests' Ollama server."""

from __future__ import annotations

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import InvalidArgument, NotFound
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.semantic import SemanticSearch
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import BrainStore
from tests.support.ollama_server import FakeOllama

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def embed_all(store: BrainStore, server: FakeOllama) -> None:
    """Search by meaning on, and every pending trace embedded (each engine's own way)."""
    embedder = OllamaEmbedder(server.url, model="nomic-embed-text")
    if isinstance(store, Brain):
        store.use_embedder(embedder)
        run_to_end(SemanticSearch(embedder).backfill(store))
    else:
        assert isinstance(store, SharedBrain)
        store.use_embedder(embedder)
        run_to_end(store.backfill())


def test_similar_ranks_live_traces_by_the_stored_vector(
    store: BrainStore, ollama_server: FakeOllama
) -> None:
    car = store.add("my automobile had a breakdown")
    motor = store.add("the vehicle motor failed again")
    store.add("espresso after dinner")
    gone = store.add("the car engine broke down on the road")
    embed_all(store, ollama_server)
    store.forget(gone.id)
    late = store.add("a truck stalled")  # not embedded yet
    assert [t.id for t, _ in store.similar(car.id, 1)] == [motor.id]
    found = store.similar(car.id, 10)
    ids = [t.id for t, _ in found]
    assert car.id not in ids and gone.id not in ids and late.id not in ids
    scores = [score for _, score in found]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    assert store.similar(late.id) == []  # no vector: nothing to compare
    near_gone = [t.id for t, _ in store.similar(gone.id, 3)]  # a forgotten one's own vector
    assert near_gone and set(near_gone) <= {car.id, motor.id} | {t.id for t, _ in found}
    assert gone.id not in near_gone
    with pytest.raises(NotFound):
        store.similar("mt_nope")
    with pytest.raises(InvalidArgument, match=r"limit must be between 1 and 200 \(got 0\)"):
        store.similar(car.id, 0)
    assert store.get(motor.id).retrieval_count == 0  # a look, not a recall


def test_cognitive_search_scores_each_part_alike(store: BrainStore) -> None:
    tea = store.add("green tea in Kyoto", metadata={"entities": ["Kyoto"], "confidence": 0.6})
    other = store.add("tea with milk")
    store.add("coffee machine is broken")
    named = store.add_node("Tea", "concept").id
    kyoto = store.add_node("Kyoto", "place").id
    store.add_edge(named, kyoto, "grown_in", 1.0)
    result = store.search("tea", mode="cognitive", limit=5)
    assert result.search_mode == "cognitive"
    assert {h.trace.id for h in result.hits} == {tea.id, other.id}
    parts = {h.trace.id: h.parts for h in result.hits}
    assert parts[tea.id] is not None and parts[other.id] is not None
    assert parts[tea.id]["graphActivation"] == pytest.approx(0.5)  # Tea -> Kyoto, one hop
    assert parts[other.id]["graphActivation"] == 0.0
    assert parts[tea.id]["importance"] == pytest.approx(0.8)
    assert parts[tea.id]["similaritySource"] == "keyword"
    assert parts[tea.id]["emotionalCongruence"] == 0.0
    assert max(parts[t]["similarity"] for t in parts) == pytest.approx(1.0)
    top = result.hits[0]
    assert top.trace.id == tea.id  # its graph and importance outweigh the other's
    assert top.parts is not None and top.parts["why"].startswith(f"{top.score:.2f} = similarity")
    assert store.get(tea.id).retrieval_count == 1  # returned: recalled
    quiet = store.search("tea", mode="cognitive", record_recall=False, mood=0.5)
    assert [h.trace.id for h in quiet.hits] == [h.trace.id for h in result.hits]
    assert store.get(tea.id).retrieval_count == 1
    only = store.search("tea", TraceFilter(tag="none"), mode="cognitive")
    assert only.hits == ()
    assert store.search("  ", mode="cognitive").hits == ()
    with pytest.raises(InvalidArgument, match=r"mood must be between -1 and 1 \(got 2\)"):
        store.search("tea", mode="cognitive", mood=2)
    with pytest.raises(InvalidArgument, match=r"mood is for the cognitive mode only"):
        store.search("tea", mode="keyword", mood=0.5)


def test_cognitive_search_takes_similarity_from_vectors_when_there(
    store: BrainStore, ollama_server: FakeOllama
) -> None:
    car = store.add("my automobile had a breakdown")
    store.add("espresso after dinner")
    embed_all(store, ollama_server)
    result = store.search("vehicle failure", mode="cognitive", limit=1)
    assert [h.trace.id for h in result.hits] == [car.id]  # no shared word: by meaning
    assert result.hits[0].parts is not None
    assert result.hits[0].parts["similaritySource"] == "vector"
    assert 0 < result.hits[0].parts["similarity"] <= 1
