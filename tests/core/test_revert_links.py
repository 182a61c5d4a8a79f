"""Reverting link, unlink, add, merge and purge batches: conflicts write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memgui.core.brain import Brain
from memgui.core.errors import Conflict

EMBEDDED = "mt_e7a13dd7-ce81-4629-bd98-030e62efe883"  # has a vector in the AgentOS fixture


def last_batch(brain: Brain) -> str:
    return brain.journal_since(brain.last_journal_id() - 1)[-1].batch_id


def links(brain: Brain) -> list[tuple]:
    return brain.db.conn.execute("SELECT from_id, to_id, kind FROM memory_links").fetchall()


def refused(brain: Brain, batch_id: str) -> Conflict:
    """Revert must raise Conflict and leave the journal and the links as they were."""
    journal_before, links_before = brain.last_journal_id(), links(brain)
    with pytest.raises(Conflict) as err:
        brain.revert(batch_id)
    assert brain.last_journal_id() == journal_before
    assert links(brain) == links_before
    return err.value


def test_revert_unlink_after_an_endpoint_was_purged_is_a_conflict(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    brain.unlink(a.id, b.id, "caused_by")
    unlink_batch = last_batch(brain)
    brain.purge(b.id)
    err = refused(brain, unlink_batch)
    assert "no longer exists" in str(err)
    assert links(brain) == []


def test_revert_link_after_an_endpoint_was_purged_is_a_conflict(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    link_batch = last_batch(brain)
    brain.purge(b.id)  # removes (and journals) the link
    refused(brain, link_batch)


def test_revert_add_after_a_later_link_is_a_conflict(brain: Brain) -> None:
    a = brain.add("a")
    add_batch = last_batch(brain)
    b = brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    refused(brain, add_batch)
    assert brain.get(a.id).content == "a"
    assert links(brain) == [(a.id, b.id, "caused_by")]


def test_revert_link_after_unlink_and_relink_is_a_conflict(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    link_batch = last_batch(brain)
    brain.unlink(a.id, b.id, "caused_by")
    brain.link(a.id, b.id, "caused_by")  # may carry the same created_at (same millisecond)
    refused(brain, link_batch)
    assert links(brain) == [(a.id, b.id, "caused_by")]


def test_revert_the_same_link_batch_twice_is_a_conflict(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    link_batch = last_batch(brain)
    brain.revert(link_batch)
    refused(brain, link_batch)


def test_revert_unlink_when_relinked_since_is_a_conflict(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    brain.unlink(a.id, b.id, "caused_by")
    unlink_batch = last_batch(brain)
    brain.link(a.id, b.id, "caused_by")
    refused(brain, unlink_batch)


def test_revert_and_revert_again_of_a_link_still_work(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    brain.link(a.id, b.id, "caused_by")
    brain.revert(last_batch(brain))
    assert links(brain) == []
    brain.revert(last_batch(brain))
    assert links(brain) == [(a.id, b.id, "caused_by")]


def test_revert_of_an_update_of_a_purged_trace_says_it_no_longer_exists(brain: Brain) -> None:
    t = brain.add("one")
    brain.update(t.id, {"content": "two"})
    update_batch = last_batch(brain)
    brain.purge(t.id)
    err = refused(brain, update_batch)
    assert f"trace {t.id} no longer exists" in str(err)
    assert "version -1" not in str(err)


def test_revert_merge_keeps_recalls_made_since(brain: Brain) -> None:
    a, c = brain.add("kumquat one"), brain.add("kumquat two")
    for _ in range(2):
        brain.search("one")
    for _ in range(3):
        brain.search("two")
    survivor = brain.merge([a.id, c.id])
    assert survivor.id == c.id and survivor.retrieval_count == 5
    merge_batch = last_batch(brain)
    brain.search("kumquat", limit=1)  # one recall of the survivor
    assert brain.get(c.id).retrieval_count == 6
    brain.revert(merge_batch)
    assert brain.get(a.id).retrieval_count == 2
    assert brain.get(c.id).retrieval_count == 4  # its own 3, plus the recall since


def test_revert_of_a_purge_marks_a_lost_vector_pending(agentos_copy: Path) -> None:
    brain = Brain.open(agentos_copy)
    try:
        assert brain.get(EMBEDDED).embedding_status == 1
        brain.purge(EMBEDDED)
        brain.revert(last_batch(brain))
        restored = brain.get(EMBEDDED)
        assert brain.embedding(EMBEDDED) is None
        assert restored.embedding_status == 0  # so the backfill embeds it again
        in_index = brain.db.conn.execute(
            "SELECT count(*) FROM memory_traces WHERE id = ? AND embedding_status = 1",
            (EMBEDDED,),
        ).fetchone()[0]
        assert in_index == 0
    finally:
        brain.close()
