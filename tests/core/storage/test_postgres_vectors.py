"""Search by meaning on a shared brain: `backfill` through the real ollama client (the
Ollama-compatible server of the tests), semantic and hybrid search from the matrix kept in
step with the server, and the fallbacks of a file's search."""

from __future__ import annotations

import psycopg
import pytest

from memgui.core.model import TraceFilter
from memgui.core.progress import Progress, run_to_end
from memgui.core.search.embed import OllamaEmbedder
from memgui.core.search.vectors import EmbeddingModelMismatch
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage.engine import parse_postgres_address
from tests.support.ollama_server import FakeOllama

pytestmark = pytest.mark.slow  # a real server


def _brain(pg_address: str, server: FakeOllama, model: str = "nomic-embed-text") -> SharedBrain:
    brain = SharedBrain.open(pg_address)
    brain.use_embedder(OllamaEmbedder(server.url, model=model))
    return brain


def test_embed_then_search_by_meaning_and_hybrid(
    pg_address: str, ollama_server: FakeOllama
) -> None:
    with _brain(pg_address, ollama_server) as brain:
        car = brain.add("my automobile stalled on an icy dawn")
        dog = brain.add("the puppy ate dinner")
        assert brain.search("vehicle broken", mode="semantic").search_mode == "keyword"  # none yet
        seen: list[Progress] = []
        report = run_to_end(brain.backfill(batch=1), seen.append)
        assert (report.embedded, report.stale, report.remaining) == (2, 0, 0)
        assert seen[-1].done == seen[-1].total == 2
        assert run_to_end(brain.backfill()).embedded == 0  # nothing pending
        result = brain.search("car breakdown in winter", mode="semantic", record_recall=False)
        assert result.search_mode == "semantic"
        assert [h.trace.id for h in result.hits] == [car.id]  # no shared word, same meaning
        assert 0 < result.hits[0].score <= 1
        both = brain.search("puppy vehicle", mode="hybrid")
        assert both.search_mode == "hybrid" and {h.trace.id for h in both.hits} == {car.id, dog.id}
        assert brain.get(dog.id).retrieval_count == 1  # recalled, as on a file
        assert brain.search("canine food").search_mode == "hybrid"  # auto, with vectors


def test_the_matrix_follows_other_connections_writes(
    pg_address: str, ollama_server: FakeOllama
) -> None:
    with _brain(pg_address, ollama_server) as brain, _brain(pg_address, ollama_server) as other:
        car = brain.add("automobile fault")
        brain.add("a song at the concert")  # live and embedded: the brain has vectors to search
        run_to_end(brain.backfill())
        assert [h.trace.id for h in brain.search("vehicle", mode="semantic").hits] == [car.id]
        other.update(car.id, {"content": "coffee with a kitten"})  # its vector dropped
        assert brain.search("vehicle", mode="semantic").hits == ()
        run_to_end(other.backfill())
        hits = brain.search("espresso feline", mode="semantic").hits
        assert [h.trace.id for h in hits] == [car.id]
        other.forget(car.id)
        assert brain.search("espresso feline", mode="semantic").hits == ()
        trashed = brain.search("espresso", mode="semantic", flt=TraceFilter(deleted=True))
        assert [h.trace.id for h in trashed.hits] == [car.id]
        # A vector another program wrote straight into the row (as AgentOS does) is seen.
        with psycopg.connect(parse_postgres_address(pg_address).conninfo) as conn:
            conn.execute("UPDATE memory_traces SET deleted = 0 WHERE id = %s", (car.id,))
        assert [h.trace.id for h in brain.search("latte", mode="semantic").hits] == [car.id]
        # Added and embedded by another connection: appended; purged: gone.
        dog = other.add("a puppy barking")
        run_to_end(other.backfill())
        assert [h.trace.id for h in brain.search("canine", mode="semantic").hits] == [dog.id]
        other.purge(dog.id)
        assert brain.search("canine", mode="semantic").hits == ()
        # Each search notes its recalls, which rewrites those rows: still found the same.
        for _ in range(3):
            assert [h.trace.id for h in brain.search("latte", mode="semantic").hits] == [car.id]


def test_fallbacks_and_refusals_as_on_a_file(pg_address: str, ollama_server: FakeOllama) -> None:
    with _brain(pg_address, ollama_server) as brain:
        brain.add("automobile engine repair")
        run_to_end(brain.backfill())
        with _brain(pg_address, ollama_server, model="all-minilm") as wrong:
            with pytest.raises(EmbeddingModelMismatch):
                wrong.search("car", mode="semantic")
            assert wrong.search("automobile").search_mode == "keyword"  # auto never fails
            with pytest.raises(EmbeddingModelMismatch):
                run_to_end(wrong.backfill())
        ollama_server.stop()
        down = brain.search("automobile", mode="hybrid")
        assert down.search_mode == "keyword" and len(down.hits) == 1
        brain.use_embedder(None)
        assert brain.search("automobile", mode="semantic").search_mode == "keyword"
