"""Undo that tolerates what undo steps alone moved, and restoring a version from history
(`core/undo.py`), without any front end."""

from __future__ import annotations

import pytest

from memgui.core import undo
from memgui.core.brain import Brain
from memgui.core.errors import Conflict
from memgui.core.model import LinkKey, changes_of

NOW = 1_700_000_000_000


def test_undo_of_a_new_memory_linked_since_takes_it_away_where_revert_refuses(
    brain: Brain,
) -> None:
    other = brain.add("other")
    new = brain.add("new")
    added, new_id = changes_of(new).batch_id, new.id
    brain.link(new_id, other.id, "relates_to")
    with pytest.raises(Conflict, match="linked since"):
        brain.revert(added)
    undone = brain.undo(added)
    assert undone.removed == {new_id} and undone.kind == "revert"
    assert [t.id for t in brain.list_traces()] == [other.id]


def test_undo_of_a_link_made_again_since_removes_it(brain: Brain) -> None:
    a, b = brain.add("a"), brain.add("b")
    linked = brain.link(a.id, b.id, "supersedes").batch_id
    brain.unlink(a.id, b.id, "supersedes")
    brain.link(a.id, b.id, "supersedes")
    with pytest.raises(Conflict, match="changed by a later batch"):
        brain.revert(linked)
    undone = brain.undo(linked)
    assert undone.links_removed == {LinkKey(a.id, b.id, "supersedes")}
    assert brain.related(a.id) == []


def test_undo_refuses_a_real_change_by_someone_else_and_writes_nothing(brain: Brain) -> None:
    trace = brain.add("mine")
    edited = changes_of(brain.update(trace.id, {"content": "mine, edited"})).batch_id
    brain.update(trace.id, {"content": "theirs"})
    mark = brain.last_journal_id()
    with pytest.raises(Conflict):
        brain.undo(edited)
    assert brain.get(trace.id).content == "theirs" and brain.last_journal_id() == mark


def test_a_purge_is_undone_by_revert_only(brain: Brain) -> None:
    trace = brain.add("gone soon")
    purged = brain.purge(trace.id).batch_id
    assert not undo.only_versions_moved(brain, brain.batch_entries(purged))
    assert brain.undo(purged).added == {trace.id}


def test_same_state_compares_what_a_person_sees(brain: Brain) -> None:
    trace = brain.add("text", tags=["a"], category="TODO")
    seen = {
        "content": "text",
        "tags": ["a"],
        "type": trace.type,
        "scope": trace.scope,
        "scope_id": "",
        "category": "TODO",
        "deleted": 0,  # as the journal may hold it
        "expires_at": None,
        "version": 99,  # not what a person sees
    }
    assert undo.same_state(trace, seen)
    assert not undo.same_state(trace, dict(seen, tags=["b"]))
    assert not undo.same_state(trace, dict(seen, deleted=True))


def test_patch_towards_sets_back_the_fields_that_differ(brain: Brain) -> None:
    brain.clock = lambda: NOW
    trace = brain.add("now", tags=["x", "y"], category="TODO")
    old = {"content": "then", "tags": ["x", "y"], "category": None, "version": 1}
    assert undo.patch_towards(trace, old, NOW) == {"content": "then", "category": None}
    held = {"content": "now", "tags": ("x", "y"), "category": "TODO"}  # tags as a tuple
    assert undo.patch_towards(trace, held, NOW) == {}


@pytest.mark.parametrize(
    ("expires_at", "patch"),
    [
        (None, {}),  # the trace has no expiry either
        (NOW + 7_200_000, {"ttl_secs": 7200}),
        (NOW + 1_500, {"ttl_secs": 2}),  # whole seconds, rounded up
        (NOW - 1, {}),  # already past: it would expire at once, so left as it is
    ],
)
def test_patch_towards_carries_an_expiry_as_the_seconds_left(
    brain: Brain, expires_at: int | None, patch: dict[str, object]
) -> None:
    brain.clock = lambda: NOW
    trace = brain.add("no expiry")
    assert undo.patch_towards(trace, {"expires_at": expires_at}, NOW) == patch


def test_patch_towards_clears_an_expiry_the_version_did_not_have(brain: Brain) -> None:
    brain.clock = lambda: NOW
    trace = brain.add("expiring", ttl_secs=60)
    assert undo.patch_towards(trace, {"expires_at": None}, NOW) == {"ttl_secs": None}


def test_restore_version_brings_back_content_and_expiry(brain: Brain) -> None:
    brain.clock = lambda: NOW
    trace = brain.add("v1")
    brain.update(trace.id, {"content": "v2", "ttl_secs": 3600})
    first, second = (entry.after or {} for entry in brain.history(trace.id))
    back = brain.restore_version(trace.id, first, expect_version=2)
    assert (back.content, back.expires_at, back.version) == ("v1", None, 3)
    again = brain.restore_version(trace.id, second)
    assert (again.content, again.expires_at) == ("v2", NOW + 3_600_000)
    with pytest.raises(Conflict):
        brain.restore_version(trace.id, first, expect_version=3)  # stale: it is at 4
