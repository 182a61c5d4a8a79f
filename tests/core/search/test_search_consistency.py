"""A search reads the brain in steps (rank, read the rows, note the recalls); another
connection's write between them must not put a trace in the answer that the answer's
filter excludes now, nor a different trace that took a purged trace's rowid."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.model import TraceFilter
from memgui.core.search import searching


@pytest.fixture
def racing(brain_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A brain whose keyword ranking is followed at once by another connection's writes."""
    with Brain.open(brain_path, actor="test") as brain:
        kept = brain.add("hello harbour kept")
        forgotten = brain.add("hello harbour forgotten later")
        refiled = brain.add("hello harbour refiled later", scope="user")
        purged = brain.add("hello harbour purged later")
        brain.flush_index()
        ranking = searching.keyword_ranking

        def ranked_then_written(*args, **kwargs):
            hits = ranking(*args, **kwargs)
            with Brain.open(brain_path, actor="other", create=False) as other:
                other.forget(forgotten.id)
                other.update(refiled.id, {"scope": "thread"})
                other.purge(purged.id)
                other.add("zebra unrelated, on the purged rowid")
            return hits

        monkeypatch.setattr(searching, "keyword_ranking", ranked_then_written)
        yield brain, kept, forgotten, refiled, purged


@pytest.mark.parametrize("record_recall", [False, True])
def test_a_write_between_ranking_and_reading_leaves_no_stale_hit(racing, record_recall) -> None:
    brain, kept, forgotten, refiled, _purged = racing
    result = brain.search("hello", TraceFilter(scope="user"), record_recall=record_recall)
    contents = [t.content for t in result.traces]
    assert contents == ["hello harbour kept"]
    assert all(not t.deleted for t in result.traces)
    if record_recall:
        assert brain.get(kept.id).retrieval_count == 1
        assert brain.get(forgotten.id).retrieval_count == 0
        assert brain.get(refiled.id).retrieval_count == 0
