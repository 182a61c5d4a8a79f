"""The facade with an embedder: embeddings follow every write, sweep backfills, similar works."""

from __future__ import annotations

from pathlib import Path

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search.embed import OllamaEmbedder


def vec_rows(brain: Brain) -> int:
    return brain.db.conn.execute("SELECT count(*) FROM memory_traces_vec").fetchone()[0]


def test_adds_are_embedded_and_found_by_meaning(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    car = brain.add("my automobile had a breakdown")
    brain.add("a puppy chased the kitten")
    assert brain.get(car.id).embedding_status == 1
    assert len(brain.embedding(car.id)) == 768
    hybrid = brain.search("vehicle failure", record_recall=False)
    assert hybrid.search_mode == "hybrid" and hybrid.traces[0].id == car.id
    assert brain.search("vehicle failure", mode="keyword").traces == []
    assert brain.info()["traces"] == 2 and brain.embedding_info()["pending"] == 0


def test_vectors_follow_forget_restore_edit_and_purge(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    t = brain.add("the engine stalled on a freezing morning")
    assert vec_rows(brain) == 1
    brain.forget(t.id)
    assert vec_rows(brain) == 0
    assert brain.search("motor failure winter", mode="semantic").traces == []
    brain.restore(t.id)
    assert vec_rows(brain) == 1
    brain.update(t.id, {"content": "espresso with dinner"})
    assert brain.get(t.id).embedding_status == 1
    assert brain.search("coffee meal", mode="semantic").traces[0].id == t.id
    brain.purge(t.id)
    assert vec_rows(brain) == 0


def test_store_never_waits_for_ollama_and_sweep_backfills(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url, retry_after=0), auto_embed=True)
    brain.add("first the database was sluggish")
    ollama_server.stop()
    pending = brain.add("the sqlite storage is quick now")
    assert pending.embedding_status == 0
    result = brain.search("sqlite", record_recall=False)
    assert result.search_mode == "keyword" and result.traces
    assert brain.sweep().embedded == 0
    ollama_server.restart()
    report = brain.sweep()
    assert report.embedded == 1 and brain.get(pending.id).embedding_status == 1


def test_similar_memories(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    dog = brain.add("the dog barked at the mechanic")
    puppy = brain.add("a puppy visited the garage")
    brain.add("cheerful morning coffee")
    similar = brain.similar(dog.id, limit=2)
    assert similar[0][0].id == puppy.id
    assert all(t.id != dog.id for t, _ in similar)


def test_agentos_embeddings_are_readable(agentos_copy: Path) -> None:
    with Brain.open(agentos_copy) as brain:
        embedded = [
            t for t in brain.list_traces(TraceFilter(include_deleted=True)) if t.embedding_status
        ]
        assert len(embedded) == 4
        assert all(len(brain.embedding(t.id)) == 1536 for t in embedded)


def test_an_expired_trace_never_comes_back_through_the_vector_path(
    brain: Brain, ollama_server
) -> None:
    now = [1_800_000_000_000]
    brain.clock = lambda: now[0]
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    short = brain.add("the puppy chased a kitten", ttl_secs=60)
    brain.add("espresso with dinner")
    assert brain.search("dog cat", mode="semantic").traces[0].id == short.id
    now[0] += 61_000
    assert brain.sweep().expired == 1
    assert vec_rows(brain) == 1
    found = brain.search("dog cat", mode="semantic", record_recall=False).traces
    assert short.id not in [t.id for t in found]


def test_the_trash_is_searched_by_meaning_when_the_filter_asks(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    gone = brain.add("my automobile had a breakdown")
    kept = brain.add("the vehicle motor failed again")
    brain.add("a puppy chased the kitten")
    brain.forget(gone.id)
    trash = brain.search("vehicle failure", TraceFilter(deleted=True), mode="semantic")
    assert [t.id for t in trash.traces] == [gone.id]
    everything = brain.search("vehicle failure", TraceFilter(include_deleted=True), mode="semantic")
    assert {gone.id, kept.id} <= {t.id for t in everything.traces}
    live = brain.search("vehicle failure", mode="semantic", record_recall=False)
    assert gone.id not in {t.id for t in live.traces}


def test_a_query_without_words_says_no_mode_ran_but_keyword(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    brain.add("my automobile had a breakdown")
    for query in ("", "!!!"):
        found = brain.search(query)
        assert list(found.traces) == [] and found.search_mode == "keyword"
    assert brain.search("!!!", mode="hybrid").search_mode == "hybrid"  # asked for: said


def test_a_new_trace_on_a_purged_traces_rowid_is_found_by_meaning(
    brain: Brain, ollama_server
) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    brain.add("My automobile stalled")
    newest = brain.add("The puppy chewed the sofa")
    assert brain.search("puppy sofa", mode="semantic", record_recall=False).traces  # cached
    brain.purge(newest.id)
    taker = brain.add("We drank espresso at the cafe")
    assert taker.rowid == newest.rowid  # SQLite gave the freed rowid to the new trace
    hits = brain.search("We drank espresso at the cafe", mode="semantic", record_recall=False)
    assert hits.search_mode == "semantic" and hits.traces[0].id == taker.id


def test_a_merged_memory_is_embedded_again_at_once(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    one = brain.add("The puppy chewed the sofa")
    two = brain.add("The dog ate a cushion")
    merged = brain.merge([one.id, two.id])
    assert brain.get(merged.id).embedding_status == 1
    hits = brain.search(merged.content, mode="semantic", record_recall=False)
    assert hits.search_mode == "semantic" and hits.traces[0].id == merged.id


def test_text_a_revert_brings_back_is_embedded_at_once(brain: Brain, ollama_server) -> None:
    brain.use_embedder(OllamaEmbedder(ollama_server.url), auto_embed=True)
    one = brain.add("The puppy chewed the sofa")
    brain.add("The dog ate a cushion")
    merged = brain.merge([brain.list_ids()[0], brain.list_ids()[1]])
    batch = brain.history(merged.id)[-1].batch_id
    brain.revert(batch)
    assert brain.get(one.id).embedding_status == 1
    brain.update(one.id, {"content": "espresso after dinner"})
    brain.revert(brain.history(one.id)[-1].batch_id)
    assert brain.get(one.id).embedding_status == 1
    hits = brain.search("The puppy chewed the sofa", mode="semantic", record_recall=False)
    assert hits.traces[0].id == one.id
