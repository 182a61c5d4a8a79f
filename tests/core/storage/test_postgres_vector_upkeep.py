"""`embed --rebuild` and `embed --reindex` on a shared brain, in the core: progress, cancel,
the brain's lock for long work, and what a refusal leaves (nothing)."""

from __future__ import annotations

import psycopg
import pytest

from memgui.core.errors import BrainLocked, EmbeddingUnavailable
from memgui.core.progress import Cancelled, Progress, run_to_end
from memgui.core.search.embed import OllamaEmbedder, pack_vector
from memgui.core.shared_brain import SharedBrain
from memgui.core.storage import postgres_locks
from memgui.core.storage.engine import parse_postgres_address
from tests.support.ollama_server import FakeOllama

pytestmark = pytest.mark.slow  # a real server


def _embedded(pg_address: str, server: FakeOllama, texts: list[str]) -> SharedBrain:
    brain = SharedBrain.open(pg_address)
    brain.use_embedder(OllamaEmbedder(server.url, model="nomic-embed-text"))
    for text in texts:
        brain.add(text)
    run_to_end(brain.backfill())
    return brain


def test_rebuild_reembeds_with_progress_and_a_cancel_keeps_what_was_written(
    pg_address: str, ollama_server: FakeOllama
) -> None:
    texts = ["a puppy", "a kitten", "a car", "a truck", "an espresso"]
    with _embedded(pg_address, ollama_server, texts) as brain:
        other = OllamaEmbedder(ollama_server.url, model="all-minilm")
        batches = 0

        def cancel_after_two() -> bool:
            return batches >= 2

        job = brain.rebuild_vectors(other, batch=2, cancel_requested=cancel_after_two)
        seen: list[Progress] = []
        with pytest.raises(Cancelled):
            for event in job:
                seen.append(event)
                batches = len(seen) - 1  # the first event comes before any batch
        assert [(p.done, p.total) for p in seen] == [(0, 5), (2, 5), (4, 5)]
        info = brain.embedding_info()
        assert (info["model"], info["dimensions"], info["pending"]) == ("all-minilm", 384, 1)
        report = run_to_end(brain.rebuild_vectors(other))  # again, to the end
        assert (report.embedded, report.stale, report.remaining) == (5, 0, 0)


def test_a_rebuild_with_the_model_missing_or_the_lock_held_changes_nothing(
    pg_address: str, ollama_server: FakeOllama
) -> None:
    with _embedded(pg_address, ollama_server, ["a puppy", "a car"]) as brain:
        with pytest.raises(EmbeddingUnavailable):
            run_to_end(brain.rebuild_vectors(OllamaEmbedder(ollama_server.url, model="nope")))
        assert brain.embedding_info() == {
            "model": "nomic-embed-text",
            "dimensions": 768,
            "pending": 0,
        }
        address = parse_postgres_address(pg_address)
        with psycopg.connect(address.conninfo, autocommit=True) as holder, holder.transaction():
            postgres_locks.hold(holder, address.brain_id, "import", str(address))
            minilm = OllamaEmbedder(ollama_server.url, model="all-minilm")
            with pytest.raises(BrainLocked, match="import"):
                run_to_end(brain.rebuild_vectors(minilm))
            with pytest.raises(BrainLocked, match="import"):
                run_to_end(brain.reindex_vectors())
        assert brain.embedding_info()["model"] == "nomic-embed-text"


def test_reindex_makes_misfit_vectors_pending_and_a_cancel_changes_nothing(
    pg_address: str, ollama_server: FakeOllama
) -> None:
    with _embedded(pg_address, ollama_server, ["a puppy", "a car", "a kitten"]) as brain:
        odd = brain.add("an odd one", id="zz_odd")  # last in id order
        brain.conn.execute(
            "UPDATE memory_traces SET embedding = %s, embedding_status = 1 "
            "WHERE brain_id = %s AND id = %s",
            (pack_vector([0.5, 0.5, 0.5]), brain.brain_id, odd.id),
        )
        brain.conn.execute(  # as a brain copied without its pin would be
            "DELETE FROM brain_meta WHERE brain_id = %s AND key LIKE 'embedding%%'",
            (brain.brain_id,),
        )
        assert brain.embedding_info()["dimensions"] is None
        with pytest.raises(Cancelled):
            run_to_end(brain.reindex_vectors(chunk=1, cancel_requested=lambda: True))
        assert brain.embedding_info()["dimensions"] is None  # rolled back: nothing changed
        seen: list[Progress] = []
        indexed = run_to_end(brain.reindex_vectors(chunk=2), seen.append)
        assert seen[0].total == 4 and seen[-1].done == 4
        assert indexed == 3  # pinned from the first in id order: the odd one does not fit
        info = brain.embedding_info()
        assert (info["dimensions"], info["pending"]) == (768, 1)
        assert brain.conn.execute(
            "SELECT embedding IS NULL FROM memory_traces WHERE brain_id = %s AND id = %s",
            (brain.brain_id, odd.id),
        ).fetchone() == (True,)
