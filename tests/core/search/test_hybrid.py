"""Hybrid search and the backfill, end to end: Brain, the real ollama client, a local server."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import EmbeddingUnavailable
from memgui.core.model import TraceFilter
from memgui.core.progress import run_to_end
from memgui.core.search import hybrid, vector_cache, vectors
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.semantic import SemanticSearch
from tests.support import ollama_fixture
from tests.support.ollama_server import FakeOllama

ollama_server = ollama_fixture.ollama_server


@pytest.fixture
def brain(tmp_path: Path) -> Iterator[Brain]:
    opened = Brain.open(tmp_path / "brain.sqlite")
    yield opened
    opened.close()
    vector_cache.forget_cache()


def embedded(brain: Brain, server: FakeOllama, model: str = "nomic-embed-text") -> SemanticSearch:
    semantic = SemanticSearch(OllamaEmbedder(server.url, model=model))
    run_to_end(semantic.backfill(brain))
    brain.semantic = semantic
    return semantic


# --- RRF ----------------------------------------------------------------------------------


def test_second_in_both_beats_first_in_one() -> None:
    fused = hybrid.rrf_fuse(["a", "b", "c"], ["x", "b", "y"])
    assert fused[0][0] == "b"
    assert fused[0][1] == pytest.approx(2 / 62)
    assert {tid for tid, _ in fused[1:3]} == {"a", "x"}


def test_at_equal_fused_rank_the_stronger_wins_then_id() -> None:
    fused = hybrid.rrf_fuse(["a"], ["b"], strength={"a": 0.5, "b": 0.9})
    assert [tid for tid, _ in fused] == ["b", "a"]
    assert hybrid.rrf_fuse(["b"], ["a"]) == [("a", 1 / 61), ("b", 1 / 61)]  # tie → id asc


def test_fusion_ignores_duplicates_within_a_leg() -> None:
    assert hybrid.rrf_fuse(["a", "a", "b"], []) == [("a", 1 / 61), ("b", 1 / 62)]


# --- search -------------------------------------------------------------------------------


def test_paraphrase_without_shared_words_is_found(brain: Brain, ollama_server: FakeOllama) -> None:
    car = brain.add("My automobile stalled on a freezing winter dawn")
    brain.add("We picked sqlite as the datastore")
    embedded(brain, ollama_server)
    query = "car broke down in the cold morning"
    assert brain.search(query, mode="keyword", record_recall=False).hits == ()
    result = brain.search(query, record_recall=False)
    assert result.search_mode == "hybrid"
    assert [t.id for t in result.traces] == [car.id]


def test_keyword_and_meaning_both_surface(brain: Brain, ollama_server: FakeOllama) -> None:
    exact = brain.add("the garage visit was expensive")
    meaning = brain.add("mechanic fixed the automobile")
    brain.add("kitten asleep")
    embedded(brain, ollama_server)
    ids = [t.id for t in brain.search("garage", limit=5, record_recall=False).traces]
    assert ids[0] == exact.id and meaning.id in ids


def test_filters_apply_before_the_cut(brain: Brain, ollama_server: FakeOllama) -> None:
    for i in range(30):
        brain.add(f"automobile number {i}", tags=["fleet"])
    wanted = brain.add("an old vehicle in the barn", tags=["barn"])
    embedded(brain, ollama_server)
    result = brain.search("car", TraceFilter(tag="barn"), limit=1, record_recall=False)
    assert [t.id for t in result.traces] == [wanted.id]


def test_server_down_falls_back_to_keyword(
    brain: Brain, ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memgui.core.search import searching

    brain.add("car repair at the garage")
    embedded(brain, ollama_server)
    ollama_server.stop()
    calls = []
    ranking = searching.keyword_ranking

    def counted(*args, **kwargs):
        calls.append(args[1])
        return ranking(*args, **kwargs)

    monkeypatch.setattr(searching, "keyword_ranking", counted)
    result = brain.search("garage", record_recall=False)
    assert result.search_mode == "keyword" and len(result.hits) == 1
    assert calls == ["garage"]  # the keyword leg already running answers: ranked once
    with pytest.raises(EmbeddingUnavailable):
        brain.semantic.embedder.embed(["garage"])


def test_similar_traces(brain: Brain, ollama_server: FakeOllama) -> None:
    car = brain.add("my car is broken")
    twin = brain.add("the automobile failed")
    brain.add("coffee with dinner")
    embedded(brain, ollama_server)
    hits = hybrid.similar_traces(brain.db.conn, brain.brain_id, car.id, limit=5)
    assert [tid for tid, _ in hits] == [twin.id]


# --- backfill, pin, stale vectors ---------------------------------------------------------


def test_store_while_down_then_backfill_in_batches(brain: Brain, ollama_server: FakeOllama) -> None:
    ollama_server.stop()
    semantic = SemanticSearch(OllamaEmbedder(ollama_server.url, retry_after=0))
    trace = brain.add("automobile")
    assert semantic.embed_now(brain, [trace.id]) == 0  # never fails the write
    for i in range(9):
        brain.add(f"note {i}")
    assert brain.get(trace.id).embedding_status == 0
    ollama_server.start()
    events = []
    report = run_to_end(semantic.backfill(brain, batch=4), events.append)
    assert report == hybrid.BackfillReport(embedded=10, stale=0, remaining=0)
    assert ollama_server.embed_count() == 3  # 4 + 4 + 2
    assert events[0].total == 10 and events[-1].done == 10
    assert hybrid.BACKFILL_BATCH == 128
    assert brain.get(trace.id).embedding_status == 1


def test_other_dimension_is_refused(brain: Brain, ollama_server: FakeOllama) -> None:
    brain.add("car")
    embedded(brain, ollama_server)
    brain.add("cat")
    other = OllamaEmbedder(ollama_server.url, model="all-minilm")
    with pytest.raises(vectors.EmbeddingModelMismatch, match="--rebuild --model all-minilm"):
        run_to_end(hybrid.backfill(brain.db.conn, brain.brain_id, other))
    assert ollama_server.embed_count() == 1  # refused before asking Ollama
    with pytest.raises(vectors.EmbeddingModelMismatch):
        brain.semantic = SemanticSearch(other)
        brain.search("car", mode="hybrid", record_recall=False)


def test_rebuild_switches_model(brain: Brain, ollama_server: FakeOllama) -> None:
    brain.add("car")
    embedded(brain, ollama_server)
    other = OllamaEmbedder(ollama_server.url, model="all-minilm")
    report = run_to_end(hybrid.rebuild(brain.db.conn, brain.brain_id, other))
    assert report.embedded == 1
    assert vectors.pinned_model(brain.db.conn, brain.brain_id) == ("all-minilm", 384)
    brain.semantic = SemanticSearch(other)
    assert brain.search("automobile", record_recall=False).search_mode == "hybrid"


class EditingEmbedder:
    """A real embedder; while Ollama computes, a person edits the trace."""

    def __init__(self, inner: OllamaEmbedder, brain: Brain, trace_id: str) -> None:
        self.inner, self.brain, self.trace_id = inner, brain, trace_id
        self.model = inner.model

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors_out = self.inner.embed(texts)
        self.brain.update(self.trace_id, {"content": "a kitten on the sofa"})
        return vectors_out


def test_vector_of_old_text_is_never_written(brain: Brain, ollama_server: FakeOllama) -> None:
    trace = brain.add("my car is broken")
    embedder = EditingEmbedder(OllamaEmbedder(ollama_server.url), brain, trace.id)
    report = run_to_end(hybrid.backfill(brain.db.conn, brain.brain_id, embedder))
    assert report == hybrid.BackfillReport(embedded=0, stale=1, remaining=1)
    row = brain.db.conn.execute(
        "SELECT embedding, embedding_status FROM memory_traces WHERE id = ?", (trace.id,)
    ).fetchone()
    assert row == (None, 0)
    semantic = embedded(brain, ollama_server)  # a later backfill embeds the new text
    assert brain.get(trace.id).embedding_status == 1
    hits = hybrid.semantic_leg(
        brain.db.conn, brain.brain_id, semantic.embedder, "feline", 5, "t.deleted = 0"
    )
    assert hits == [trace.id]


# --- the two legs in parallel -------------------------------------------------------------


def test_keyword_leg_runs_beside_the_semantic_leg(
    brain: Brain, ollama_server: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memgui.core.search import searching

    exact = brain.add("the garage visit was expensive")
    meaning = brain.add("mechanic fixed the automobile")
    embedded(brain, ollama_server)
    threads: list[str] = []
    ranking = searching.keyword_ranking

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return ranking(*args, **kwargs)

    monkeypatch.setattr(searching, "keyword_ranking", recorded)
    ids = [t.id for t in brain.search("garage", limit=5, record_recall=False).traces]
    assert ids[0] == exact.id and meaning.id in ids
    assert threads and threads[0] != threading.current_thread().name


@pytest.mark.timeout(60)
def test_hybrid_search_inside_a_transaction(brain: Brain, ollama_server: FakeOllama) -> None:
    # The caller holds the connection there: the legs run one after the other.
    exact = brain.add("the garage visit was expensive")
    meaning = brain.add("mechanic fixed the automobile")
    embedded(brain, ollama_server)
    outside = [t.id for t in brain.search("garage", limit=5, record_recall=False).traces]
    with brain.batch():
        brain.add("garage door squeaks")
        inside = brain.search("garage", limit=5, record_recall=False)
    assert inside.search_mode == "hybrid"
    assert outside[0] == exact.id and meaning.id in outside
    assert len(inside.traces) == 3


def test_bad_syntax_in_hybrid_mode_falls_back(brain: Brain, ollama_server: FakeOllama) -> None:
    exact = brain.add("the garage visit was expensive")
    embedded(brain, ollama_server)
    result = brain.search('garage "', mode="hybrid", record_recall=False)
    assert result.search_mode == "hybrid" and result.traces[0].id == exact.id


def test_with_ollama_down_the_keyword_answer_is_still_the_best_by_strength(
    brain: Brain, ollama_server: FakeOllama
) -> None:
    with brain.batch():
        for _ in range(12):
            brain.add("harbour crane", strength=0.1)
        strongest = brain.add("harbour crane", strength=1.0)
    embedded(brain, ollama_server)
    ollama_server.stop()
    found = brain.search("harbour", limit=1, mode="hybrid", record_recall=False)
    assert found.search_mode == "keyword"
    assert [t.id for t in found.traces] == [strongest.id]
