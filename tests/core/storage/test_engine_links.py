"""Links on both engines (`BrainStore.link`, `unlink`, `related`): the same calls give the
same links, refusals, history and reverts on a SQLite file and on a real PostgreSQL server."""

from __future__ import annotations

import pytest

from memgui.core.errors import Conflict, InvalidArgument, NotFound
from memgui.core.storage.engine import BrainStore

pytestmark = pytest.mark.slow  # the PostgreSQL half starts a server


def test_link_unlink_and_related(store: BrainStore) -> None:
    a = store.add("the release plan")
    b = store.add("the rollback plan")
    made = store.link(b.id, a.id, "relates_to")
    key = tuple(sorted((a.id, b.id)))
    assert made and [tuple(k)[:2] for k in made.links_added] == [key]
    assert not store.link(a.id, b.id, "relates_to")  # symmetric: already there
    assert store.link(b.id, a.id, "supersedes")
    seen_from_a = {(r.id, r.kind, r.direction) for r in store.related(a.id)}
    assert seen_from_a == {
        (b.id, "relates_to", "out" if key[0] == a.id else "in"),
        (b.id, "superseded_by", "in"),
    }
    assert [r.snippet for r in store.related(b.id)] == ["the release plan"] * 2
    store.forget(b.id)
    assert store.related(a.id) == []  # a forgotten trace is not shown as related
    store.restore(b.id)
    removed = store.unlink(a.id, b.id, "relates_to")
    assert removed and len(removed.links_removed) == 1
    assert not store.unlink(a.id, b.id, "relates_to")  # nothing there: nothing changes
    assert [r.kind for r in store.related(a.id)] == ["superseded_by"]
    hits = store.search("release", expand_links=True).hits
    assert [[r.id for r in h.related] for h in hits] == [[b.id]]


def test_bad_links_are_refused_and_write_nothing(store: BrainStore) -> None:
    a = store.add("one")
    with pytest.raises(InvalidArgument) as caught:
        store.link(a.id, a.id, "relates_to")
    assert caught.value.field == "to_id"
    with pytest.raises(InvalidArgument) as caught:
        store.link(a.id, "mt_missing", "likes")
    assert caught.value.field == "kind"
    with pytest.raises(NotFound):
        store.link(a.id, "mt_missing", "relates_to")
    with pytest.raises(NotFound):
        store.related("mt_missing")
    assert [e.op for e in store.history(a.id)] == ["add"]


def test_history_and_revert_of_batches_that_changed_links(store: BrainStore) -> None:
    a = store.add("first")
    b = store.add("second")
    made = store.link(a.id, b.id, "caused_by")
    for trace_id in (a.id, b.id):  # filed under a, found from b too
        assert [e.op for e in store.history(trace_id)] == ["add", "link"]
    store.revert(made.batch_id)
    assert store.related(a.id) == []
    assert [e.op for e in store.history(b.id)] == ["add", "link", "unlink"]
    relinked = store.link(a.id, b.id, "caused_by")
    removed = store.unlink(a.id, b.id, "caused_by")
    with pytest.raises(Conflict):  # the link it made was removed since
        store.revert(relinked.batch_id)
    store.revert(removed.batch_id)  # the link comes back
    assert [(r.id, r.kind) for r in store.related(a.id)] == [(b.id, "caused_by")]
    # A trace added and then linked: reverting its add would drop the link.
    c = store.add("third")
    store.link(c.id, a.id, "relates_to")
    with pytest.raises(Conflict):
        assert c.changes is not None
        store.revert(c.changes.batch_id)
    assert store.get(c.id).content == "third"
    # A purge takes the links with it, and its revert brings them back.
    purged = store.purge(b.id)
    assert len(purged.links_removed) == 1
    store.revert(purged.batch_id)
    assert {(r.id, r.kind) for r in store.related(a.id)} == {
        (b.id, "caused_by"),
        (c.id, "relates_to"),
    }
    assert [e.op for e in store.history(b.id)][-4:] == ["unlink", "purge", "revert", "link"]
